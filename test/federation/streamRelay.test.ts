import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TaskArtifactUpdateEvent } from '@a2a-js/sdk';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { AnswerRelay } from '../../src/federation/answerRelay';
import { createMemoryLogger } from '../../src/log/logger';
import { a2aClient, answerText, partsText, textRequest } from '../support/a2aClient';
import { startOpenAIServer, type OpenAIServer } from '../support/openaiServer';

/** A promise the test resolves when it sees something, failing with `what` if that takes longer than 5 s. */
function signal(what: string): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`timed out waiting for ${what}`)), 20_000);
    resolve = () => {
      clearTimeout(timer);
      done();
    };
  });
  promise.catch(() => {});
  return { promise, resolve };
}

/**
 * Issue 12: a remote agent's streamed answer reaches the node's own caller
 * chunk by chunk, relayed while the peer's model produces it. Two whole
 * lango nodes on loopback, each over the real `openai` client and its own
 * scripted streaming server.
 */
describe("a remote agent's streamed answer", () => {
  const apps: LangoApp[] = [];
  const models: OpenAIServer[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    while (apps.length) await apps.pop()!.close();
    while (models.length) await models.pop()!.close();
    while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
  });

  async function node(name: string, a2a: LangoConfigInput['a2a'] = {}): Promise<{ url: string; model: OpenAIServer }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lango-relay-${name}-`));
    dirs.push(dir);
    const model = await startOpenAIServer();
    models.push(model);
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      agent: { provider: 'openai', apiKey: 'sk-relay', baseUrl: model.baseURL, model: 'scripted' },
      tools: { browser: { enabled: false } },
      a2a: { agentName: name, ...a2a },
    });
    const app = await createApp(config, { logger: createMemoryLogger() });
    apps.push(app);
    return { url: await app.listen(), model };
  }

  it('is relayed to the caller chunk by chunk while the peer produces it', async () => {
    const peer = await node('streamer');
    const hub = await node('hub', { remoteAgents: [{ name: 'streamer', baseUrl: peer.url }] });
    const pieces = ['Remote answer ', 'streams ', 'here.'];
    const seen = pieces.map((_, i) => signal(`the hub's caller to see chunk ${i}`));
    peer.model.push({ chunks: pieces, before: async (i) => (i === 0 ? undefined : seen[i - 1]!.promise) });
    hub.model.push({ toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'streamer' } }] });

    const client = await a2aClient(hub.url, 'JSONRPC');
    const chunks: TaskArtifactUpdateEvent[] = [];
    for await (const event of client.sendMessageStream(textRequest('ask the streamer'))) {
      if (event.payload?.$case !== 'artifactUpdate') continue;
      chunks.push(event.payload.value);
      seen[chunks.length - 1]?.resolve();
    }
    // Whole words go on as they come; the last word (no whitespace after it yet) comes with the settled answer.
    expect(chunks.map((c) => [partsText(c.artifact?.parts), c.append, c.lastChunk])).toEqual([
      ['Remote answer ', false, false],
      ['streams ', true, false],
      ['here.', true, true],
    ]);
    expect(chunks.every((c) => c.artifact?.metadata?.agent === 'streamer')).toBe(true);
    const stored = await client.getTask({ tenant: '', id: chunks[0]!.taskId, historyLength: 0 });
    expect(answerText(stored)).toBe('Remote answer streams here.');
  });
});

describe('AnswerRelay', () => {
  const mask = (text: string) => text.replaceAll('hunter2', '[REDACTED]');

  it('masks a secret the peer split across two chunks', () => {
    const relay = new AnswerRelay(mask);
    const out = [relay.add('a', 'the password is hun', false), relay.add('a', 'ter2 and more ', true)];
    expect(out.join('')).toBe('the password is [REDACTED] and more ');
    expect(out.join('')).not.toContain('hunter2');
  });

  it('joins a second artifact with a line break and stops at a rewrite of one already sent', () => {
    const relay = new AnswerRelay((t) => t);
    expect(relay.add('a', 'first ', false)).toBe('first ');
    expect(relay.add('b', 'second ', false)).toBe('\nsecond ');
    expect(relay.add('a', 'rewritten ', false)).toBe('');
    expect(relay.add('b', 'more ', true)).toBe('');
  });

  it('passes on what a task snapshot adds to the chunks received, and stops when it rewrites them', () => {
    const relay = new AnswerRelay((t) => t);
    expect(relay.addWhole('a', '')).toBe('');
    expect(relay.addWhole('a', 'w1 w2 ')).toBe('w1 w2 ');
    expect(relay.add('a', 'w3 ', true)).toBe('w3 ');
    expect(relay.addWhole('a', 'w1 w2 w3 ')).toBe('');
    expect(relay.addWhole('a', 'w1 w2 w3 w4 ')).toBe('w4 ');
    expect(relay.addWhole('a', 'other ')).toBe('');
    expect(relay.add('a', 'w5 ', true)).toBe('');
  });
});
