import path from 'node:path';
import { Agent } from 'undici';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { loadRemoteAgents } from '../../src/federation/loadRemoteAgents';
import { rawPost, startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { baseOptions, drain, entries, logged } from '../support/federationRun';
import { runChildClient, startChildPeer, type ChildPeer } from './support/childPeer';

/**
 * Issue 12: the community package `a2a-js` (0.2.0), an express server and a
 * fetch client of its own, both directions. Its data model predates v0.3
 * (`type` on parts, no `kind`, no messageId, no protocolVersion), and its
 * client still sends with `tasks/send`.
 */
/** A client or peer script of test/extras, where its stack is installed (npm run test:extras). */
const extra = (file: string) => path.join(__dirname, '..', 'extras', file);

describe('the node federating to an a2a-js server', () => {
  let peer: ChildPeer;
  let dispatcher: Agent;
  beforeAll(async () => {
    dispatcher = new Agent();
    peer = await startChildPeer(extra('a2aJsPeer.mjs'), ['a2ajs']);
  });
  afterAll(async () => {
    await peer.close();
    await dispatcher.destroy();
  });
  const deviations = (logger: MemoryLogger) =>
    logged(logger, 'warn', 'deviates from the A2A spec').map((r) => String(r.meta.deviation));

  it('loads its card, reads its answers and polls a task it left working, naming each tolerated deviation once', async () => {
    const logger = createMemoryLogger();
    const { agents, skipped } = await loadRemoteAgents({
      ...baseOptions(logger),
      dispatcher,
      entries: entries({ name: 'a2ajs', baseUrl: peer.url }),
    });
    expect(skipped).toEqual([]);

    expect((await drain(agents[0], { text: 'hello there' })).outcome).toEqual({
      status: 'completed',
      text: 'a2a-js: hello there',
    });
    expect((await drain(agents[0], { text: 'do it later' })).outcome).toEqual({
      status: 'completed',
      text: 'a2a-js: do it later',
    });
    expect(peer.seen.map((s) => s.method)).toEqual(['message/send', 'message/send', 'tasks/get']);
    expect(deviations(logger).sort()).toEqual([
      'a v0.3 message without messageId (one is made up)',
      'a v0.3 result without kind (completed from its shape)',
    ]);
  });
});

describe('the a2a-js client calling the node', () => {
  let node: A2ATestNode;
  beforeAll(async () => {
    node = await startA2ANode();
  });
  afterAll(() => node.close());

  it('reads the card and tasks; sending with the pre-0.2 tasks/send gets method-not-found, and the node carries on', async () => {
    const sent = await rawPost(
      node.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hello a2a-js' }] } },
      }),
    );
    const taskId = sent.body.result.task.id as string;

    const [card, send, get] = await runChildClient(extra('a2aJsClient.mjs'), [node.url, taskId]);
    expect(card.card).toEqual({ name: 'lango-orchestrator', url: node.url });
    expect(send.send.error).toMatch(/Method not found: tasks\/send/);
    // Its getTask returns the task itself (the v0.3 form: header-less requests are v0.3).
    expect(get.get.result).toMatchObject({ kind: 'task', id: taskId, status: { state: 'completed' } });
    expect(JSON.stringify(get.get.result.artifacts)).toContain('echo: hello a2a-js');
  });
});
