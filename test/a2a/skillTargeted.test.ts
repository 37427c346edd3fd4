import { randomUUID } from 'node:crypto';
import { TaskState } from '@a2a-js/sdk';
import type { ScriptedA2ARunner } from '../support/a2aRunner';
import { a2aClient, asTask, textRequest, type Binding } from '../support/a2aClient';
import { a2aTestPeer, a2aTestTools, rawPost, startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { createAgentTreeHolder } from '../../src/orchestration/liveTree';
import { grpcCall } from '../support/grpcCall';
import type { Principal } from '../../src/principal';
import { SKILL_EXTENSION, SKILL_FIELD, SKILL_METADATA_KEY } from '../../src/protocol/skillExtension';

/**
 * Skill-targeted sends (issue 33, after A2A #1989) on all three bindings: a
 * send naming a skill of the card starts its turn at the agent owning it;
 * an unknown skill id is invalid params (-32602 / HTTP 400 / gRPC
 * INVALID_ARGUMENT) listing the skill ids the caller may use; a skill
 * outside the caller's grant is no such skill. Nothing runs for a refusal.
 */

const OWNER_TOKEN = 'owner-token-8c2f5a1e';
const LIMITED_TOKEN = 'limited-token-4b7d9e3c';

describe('skill-targeted sends', () => {
  let node: A2ATestNode;
  const runner = () => node.runner as ScriptedA2ARunner;
  const message = (text: string) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] });

  beforeAll(async () => {
    // The node's tree as each caller's grant allows it, as createApp builds it.
    const tree = createAgentTreeHolder({
      tools: a2aTestTools,
      remoteAgents: [a2aTestPeer()],
      systemPrompt: 'orchestrate',
      familyOf: (tool) => ({ exec_shell: 'exec', fs_read: 'fs', secrets_get: 'secrets' })[tool],
    });
    node = await startA2ANode({
      grpc: true,
      root: (principal?: Principal) => tree.current(principal),
      config: {
        a2a: {
          auth: {
            callers: [
              { name: 'boss', bearerTokens: [OWNER_TOKEN], owner: true },
              // Conversation and planning only: no operator, no remote agents.
              {
                name: 'limited',
                bearerTokens: [LIMITED_TOKEN],
                grant: { specialists: ['planner'], remoteAgents: [], toolFamilies: [] },
              },
            ],
          },
        },
      },
    });
  }, 30_000);
  afterAll(() => node?.close());

  it('offers the extension on its card', async () => {
    const card = (await (await fetch(`${node.url}/.well-known/agent-card.json`)).json()) as {
      capabilities: { extensions: Array<{ uri: string; params?: Record<string, unknown> }> };
    };
    expect(card.capabilities.extensions).toContainEqual(
      expect.objectContaining({ uri: SKILL_EXTENSION, params: { metadataKey: SKILL_METADATA_KEY } }),
    );
  });

  it.each<Binding>(['JSONRPC', 'HTTP+JSON', 'GRPC'])(
    'starts the turn at the agent owning a known skill over %s',
    async (binding) => {
      const client =
        binding === 'GRPC'
          ? await grpcClient(node, OWNER_TOKEN)
          : await a2aClient(node.url, binding, { authorization: `Bearer ${OWNER_TOKEN}` });
      for (const skill of ['operator', 'peer']) {
        const task = asTask(
          await client.sendMessage({ ...textRequest(`for ${skill}`), metadata: { [SKILL_METADATA_KEY]: skill } }),
        );
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(runner().calls.at(-1)).toMatchObject({ text: `for ${skill}`, startAgent: skill });
      }
      // A send naming no skill is routed as before.
      await client.sendMessage(textRequest('no skill named'));
      expect(runner().calls.at(-1)?.startAgent).toBeUndefined();
    },
  );

  describe('refuses, running nothing, as invalid params listing the skills the caller may use', () => {
    const cases = [
      [
        'an unknown skill',
        OWNER_TOKEN,
        'nonesuch',
        /no such skill "nonesuch"; the skills you may use: .*operator.*peer/,
      ],
      // The limited caller may use the root and the planner only: the operator is no skill of its.
      [
        'a skill outside the caller grant',
        LIMITED_TOKEN,
        'operator',
        /no such skill "operator"; the skills you may use: lango-orchestrator, planner$/,
      ],
      ['a skill id that is not a string', OWNER_TOKEN, 42, /must be a skill id of the agent card/],
    ] as const;

    it.each(cases)('%s over JSON-RPC (-32602)', async (_what, token, skill, reason) => {
      const before = runner().calls.length;
      const answer = await rawPost(
        node.url,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: message('targeted'), metadata: { [SKILL_METADATA_KEY]: skill } },
        }),
        { 'Content-Type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${token}` },
      );
      expect(answer.body.error.code).toBe(-32602);
      expect(answer.body.error.message).toMatch(new RegExp(`^${escape(SKILL_FIELD)}: `));
      expect(answer.body.error.message).toMatch(reason);
      expect(runner().calls.length).toBe(before);
    });

    it.each(cases)('%s over HTTP+JSON (400)', async (_what, token, skill, reason) => {
      const before = runner().calls.length;
      const answer = await rawPost(
        `${node.url}/message:send`,
        JSON.stringify({ message: message('targeted'), metadata: { [SKILL_METADATA_KEY]: skill } }),
        { 'Content-Type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${token}` },
      );
      expect(answer.status).toBe(400);
      expect(answer.body.error.status).toBe('INVALID_ARGUMENT');
      expect(answer.body.error.message).toMatch(reason);
      expect(runner().calls.length).toBe(before);
    });

    it.each(cases)('%s over gRPC (INVALID_ARGUMENT)', async (_what, token, skill, reason) => {
      const before = runner().calls.length;
      const answer = await grpcCall(
        node.grpcAddress!,
        'SendMessage',
        { message: message('targeted'), metadata: { [SKILL_METADATA_KEY]: skill } },
        { authorization: `Bearer ${token}` },
      );
      expect(answer.error?.code).toBe(3);
      expect(answer.error?.details).toMatch(reason);
      expect(runner().calls.length).toBe(before);
    });

    it('in a stream too (JSON-RPC SendStreamingMessage)', async () => {
      const before = runner().calls.length;
      const answer = await rawPost(
        node.url,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendStreamingMessage',
          params: { message: message('streamed'), metadata: { [SKILL_METADATA_KEY]: 'nonesuch' } },
        }),
        {
          'Content-Type': 'application/json',
          'A2A-Version': '1.0',
          Accept: 'text/event-stream',
          authorization: `Bearer ${OWNER_TOKEN}`,
        },
      );
      expect(answer.text).toContain('-32602');
      expect(answer.text).toContain('no such skill');
      expect(runner().calls.length).toBe(before);
    });
  });
});

/** The SDK's gRPC client of `node`, with `token`. */
function grpcClient(node: A2ATestNode, token: string) {
  return a2aClient(node.url, 'GRPC', { authorization: `Bearer ${token}` });
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
