import path from 'node:path';
import { Agent } from 'undici';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { loadRemoteAgents } from '../../src/federation/loadRemoteAgents';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { baseOptions, drain, entries, logged } from '../support/federationRun';
import { runChildClient, startChildPeer, type ChildPeer } from './support/childPeer';

/**
 * Issue 12: @reactive-agents/a2a, an A2A v0.3 implementation of its own
 * (Effect-based, no @a2a-js/sdk inside), both directions. Its server answers
 * JSON-RPC with `id: null` and streams the final status before the artifact;
 * its client speaks header-less v0.3 JSON-RPC and reads `artifacts`.
 */
/** A client or peer script of test/extras, where its stack is installed (npm run test:extras). */
const extra = (file: string) => path.join(__dirname, '..', 'extras', file);

interface V03Task {
  kind: string;
  id: string;
  status: { state: string; message?: { parts: Array<{ text?: string }> } };
  artifacts?: Array<{ parts: Array<{ text?: string }> }>;
}
const artifactText = (task: V03Task) =>
  (task.artifacts ?? []).flatMap((a) => a.parts.map((p) => p.text ?? '')).join('');

describe("@reactive-agents/a2a's client calling the node", () => {
  let node: A2ATestNode;
  beforeAll(async () => {
    node = await startA2ANode();
  });
  afterAll(() => node.close());

  it('discovers the card, reads answers from artifacts, sees questions and failures in the status', async () => {
    const lines = await runChildClient(extra('reactiveClient.mjs'), [
      node.url,
      'hello reactive',
      'approve the payment',
      'fail now',
    ]);
    const [card, ...rest] = lines;
    expect(card.card).toMatchObject({ name: 'lango-orchestrator', url: node.url, protocolVersion: '0.3' });
    const sent = (message: string) => rest.find((l) => l.message === message && l.task)?.task as V03Task;
    const polled = (message: string) => rest.find((l) => l.message === message && l.polled)?.polled as V03Task;

    const hello = sent('hello reactive');
    expect(hello).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    expect(artifactText(hello)).toBe('echo: hello reactive');
    expect(polled('hello reactive')).toMatchObject({ id: hello.id, status: { state: 'completed' } });
    expect(artifactText(polled('hello reactive'))).toBe('echo: hello reactive');

    const approve = sent('approve the payment');
    expect(approve.status.state).toBe('input-required');
    expect(approve.status.message?.parts.map((p) => p.text).join('')).toBe('Approve the payment of 5 USDC? (yes/no)');

    expect(sent('fail now').status.state).toBe('failed');
    expect(rest.filter((l) => l.error)).toEqual([]);
  });
});

describe('the node federating to @reactive-agents/a2a servers', () => {
  const peers: ChildPeer[] = [];
  let dispatcher: Agent;
  beforeAll(async () => {
    dispatcher = new Agent();
    // The package's server is written for Bun: it runs unchanged over a small Bun.serve stand-in (see the script).
    peers.push(
      await startChildPeer(extra('reactivePeer.mjs'), ['reactive', 'blocking']),
      await startChildPeer(extra('reactivePeer.mjs'), ['reactive-streaming', 'streaming']),
    );
  });
  afterAll(async () => {
    await Promise.all(peers.map((p) => p.close()));
    await dispatcher.destroy();
  });
  const load = (logger: MemoryLogger, name: string, peer: ChildPeer) =>
    loadRemoteAgents({ ...baseOptions(logger), dispatcher, entries: entries({ name, baseUrl: peer.url }) });
  const deviations = (logger: MemoryLogger) =>
    logged(logger, 'warn', 'deviates from the A2A spec').map((r) => String(r.meta.deviation));

  it('finds the card at the v0.3 path and reads answers that carry id null, warning once', async () => {
    const [peer] = peers;
    const logger = createMemoryLogger();
    const { agents, skipped } = await load(logger, 'reactive', peer);
    expect(skipped).toEqual([]);
    expect(agents.map((a) => a.name)).toEqual(['reactive']);

    const first = await drain(agents[0], { text: 'hello there' });
    expect(first.outcome).toEqual({ status: 'completed', text: 'reactive: hello there' });
    const second = await drain(agents[0], { text: 'once more' });
    expect(second.outcome).toEqual({ status: 'completed', text: 'reactive: once more' });
    expect(deviations(logger)).toEqual([expect.stringMatching(/^a JSON-RPC response id that is not the request's/)]);

    const sends = peer.seen.filter((s) => s.method === 'message/send');
    expect(sends).toHaveLength(2);
    expect(sends[0].headers['a2a-version']).toBe('0.3');
  });

  it('reads a stream whose final status comes before the artifact', async () => {
    const peer = peers[1];
    const logger = createMemoryLogger();
    const { agents } = await load(logger, 'reactive-streaming', peer);
    const { outcome, error } = await drain(agents[0], { text: 'stream it' });
    expect(error).toBeUndefined();
    expect(outcome).toEqual({ status: 'completed', text: 'reactive: stream it' });
    expect(peer.seen.map((s) => s.method)).toContain('message/stream');
  });

  it('reads a failed task whose status message is a plain string: failed, not a peer fault', async () => {
    const logger = createMemoryLogger();
    const { agents } = await load(logger, 'reactive', peers[0]);
    const { outcome } = await drain(agents[0], { text: 'please fail' });
    // The peer's status message is a bare string: read as the agent's text, with one warning.
    expect(outcome).toMatchObject({ status: 'failed' });
    expect(JSON.stringify(outcome)).toContain('the scripted model refused');
    expect(deviations(logger)).toContain('a status message given as a plain string (wrapped in an agent message)');
    expect(logged(logger, 'warn', 'remote call failed').map((r) => String(r.meta.reason))).not.toContainEqual(
      expect.stringMatching(/unreachable|invalid answer/),
    );
  });
});
