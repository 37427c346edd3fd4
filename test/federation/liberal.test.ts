import { Agent } from 'undici';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { loadRemoteAgents } from '../../src/federation/loadRemoteAgents';
import { startMisbehavingPeer, type MisbehavingPeer, type MisbehavingPeerOptions } from '../support/misbehavingPeer';
import { baseOptions, drain, entries, logged } from '../support/federationRun';

/**
 * Issue 12, "liberal in what it accepts, never about security": quirks of
 * peers in the wild are tolerated, each with one warning naming the
 * deviation; what protects the node (origins, caps) stays strict.
 */
describe('peers that deviate from the spec in harmless ways', () => {
  const open: MisbehavingPeer[] = [];
  let dispatcher: Agent;
  beforeEach(() => {
    dispatcher = new Agent();
  });
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
    await dispatcher.destroy();
  });
  const peer = async (options: MisbehavingPeerOptions) => {
    const p = await startMisbehavingPeer(options);
    open.push(p);
    return p;
  };
  const load = (logger: MemoryLogger, ...list: Array<Record<string, unknown>>) =>
    loadRemoteAgents({ ...baseOptions(logger), dispatcher, entries: entries(...list) });
  const deviations = (logger: MemoryLogger) =>
    logged(logger, 'warn', 'deviates from the A2A spec').map((r) => String(r.meta.deviation));

  it('accepts a card without a description when the entry gives one, with one warning', async () => {
    const p = await peer({ name: 'terse', describe: false });
    const logger = createMemoryLogger();
    const { agents, skipped } = await load(
      logger,
      { name: 'terse', agentCardUrl: p.cardUrl, description: 'Knows terse things.' },
      { name: 'bare', agentCardUrl: p.cardUrl },
    );
    expect(agents.map((a) => [a.name, a.description])).toEqual([['terse', 'Knows terse things.']]);
    expect(deviations(logger)).toEqual(['the card has no description; the entry description is used']);
    // Without a description from either side the card is still refused.
    expect(skipped).toEqual([
      expect.objectContaining({ name: 'bare', reason: expect.stringMatching(/^malformed card: description/) }),
    ]);
  });

  it('treats localhost, 127.0.0.1 and ::1 as one origin for card pinning, with one warning', async () => {
    const p = await peer({ name: 'aliased', cardHost: 'localhost' });
    const logger = createMemoryLogger();
    const { agents } = await load(logger, { name: 'aliased', agentCardUrl: p.cardUrl });
    expect(agents).toHaveLength(1);
    expect(deviations(logger)).toEqual([
      expect.stringMatching(
        /names its interface on http:\/\/localhost:\d+ but was fetched from http:\/\/127\.0\.0\.1:\d+/,
      ),
    ]);
    const { outcome } = await drain(agents[0], { text: 'hello' });
    expect(outcome).toEqual({ status: 'completed', text: 'pong: hello' });
  });

  it('keeps other hosts strict: another loopback address is another origin', async () => {
    const p = await peer({ name: 'elsewhere', cardHost: '127.0.0.2' });
    const logger = createMemoryLogger();
    const { agents, skipped } = await load(logger, { name: 'elsewhere', agentCardUrl: p.cardUrl });
    expect(agents).toEqual([]);
    expect(skipped[0].reason).toMatch(/card offers no interface on its own origin http:\/\/127\.0\.0\.1:\d+/);
  });

  it('tolerates control characters before the JSON of SSE data lines, warning once however many calls', async () => {
    const p = await peer({ name: 'noisy', streaming: true });
    p.call = 'control-chars';
    const logger = createMemoryLogger();
    const { agents } = await load(logger, { name: 'noisy', agentCardUrl: p.cardUrl });
    for (const text of ['one', 'two']) {
      const { outcome } = await drain(agents[0], { text });
      expect(outcome).toEqual({ status: 'completed', text: `pong: ${text}` });
    }
    expect(deviations(logger)).toEqual(['control characters before the JSON of an SSE data line']);
  });

  it.each([false, true])(
    'completes v0.3 results without kind when their shape says what they are (streaming: %s)',
    async (streaming) => {
      const p = await peer({ name: 'old', version: '0.3', streaming });
      p.call = 'no-kind';
      const logger = createMemoryLogger();
      const { agents } = await load(logger, { name: 'old', agentCardUrl: p.cardUrl });
      for (const text of ['one', 'two']) {
        const { outcome } = await drain(agents[0], { text });
        expect(outcome).toEqual({ status: 'completed', text: `pong: ${text}` });
      }
      expect(deviations(logger)).toEqual(['a v0.3 result without kind (completed from its shape)']);
    },
  );

  it.each([
    ['1.0', false],
    ['1.0', true],
    ['0.3', false],
    ['0.3', true],
  ] as const)(
    'reads answers whose JSON-RPC id is not the request id (v%s, streaming: %s), warning once',
    async (version, streaming) => {
      const p = await peer({ name: 'sloppy', version, streaming });
      p.call = 'foreign-id';
      const logger = createMemoryLogger();
      const { agents } = await load(logger, { name: 'sloppy', agentCardUrl: p.cardUrl });
      for (const text of ['one', 'two']) {
        const { outcome } = await drain(agents[0], { text });
        expect(outcome).toEqual({ status: 'completed', text: `pong: ${text}` });
      }
      expect(deviations(logger)).toEqual([
        "a JSON-RPC response id that is not the request's (taken as the request's: one HTTP exchange, one request)",
      ]);
    },
  );

  it('refuses a v0.3 result whose shape is ambiguous, as an invalid answer', async () => {
    const p = await peer({ name: 'odd', version: '0.3' });
    p.call = 'ambiguous';
    const logger = createMemoryLogger();
    const { agents } = await load(logger, { name: 'odd', agentCardUrl: p.cardUrl });
    const { outcome } = await drain(agents[0], { text: 'hm' });
    expect(outcome).toEqual({ status: 'failed', reason: expect.stringMatching(/^remote agent odd invalid answer: /) });
  });
});
