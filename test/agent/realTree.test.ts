import { z } from 'zod';
import { createRunner } from '../../src/agent/runner';
import { defineTool } from '../../src/agent/tool';
import { createOfflineModel } from '../../src/llm/offline';
import { buildAgentTree } from '../../src/orchestration/tree';
import { routesOf } from '../../src/agent/transfer';
import { toEvents } from '../../src/store/sessionEvents';
import { collect, openStore } from './helpers';
import { OWNER } from '../../src/principal';

describe('runtime with the real agent tree and the offline model', () => {
  let store: ReturnType<typeof openStore>;
  beforeEach(() => (store = openStore()));
  afterEach(() => store.close());

  const commands: string[] = [];
  const tools = [
    defineTool({
      name: 'exec_shell',
      description: 'Runs a shell command in the workspace.',
      parameters: z.object({ command: z.string() }),
      execute: async ({ command }) => {
        commands.push(command);
        return { exitCode: 0, stdout: 'hi\n' };
      },
    }),
    defineTool({
      name: 'fs_read',
      description: 'Reads a file.',
      parameters: z.object({ path: z.string() }),
      execute: async ({ path }) => `read ${path}`,
    }),
  ];

  it('answers "hello" at the orchestrator and sends a named exec_shell call to the operator', async () => {
    const root = buildAgentTree({ tools });
    const runner = createRunner({
      tree: { current: () => root },
      model: createOfflineModel({ routes: (agentName) => routesOf(root, agentName) }),
      sessions: store.sessions,
      logger: store.logger,
      maxDelegationRounds: 5,
      maxTurnsPerAgent: 10,
    });

    const greeting = await collect(runner, { principal: OWNER, sessionId: 'a2a:1', text: 'hello' });
    expect(greeting.result).toMatchObject({ status: 'completed', author: 'lango-orchestrator' });
    expect(greeting.events.some((e) => e.type === 'transfer')).toBe(false);

    const task = await collect(runner, {
      principal: OWNER,
      sessionId: 'a2a:1',
      text: 'exec_shell {"command": "echo hi"}',
    });
    expect(task.events).toContainEqual({ type: 'transfer', from: 'lango-orchestrator', to: 'operator' });
    expect(task.result).toMatchObject({ status: 'completed', author: 'operator' });
    expect(commands).toEqual(['echo hi']);

    const visible = toEvents(await await store.sessions.messages(OWNER, 'a2a:1', { visibleOnly: true }), root.name);
    expect(visible.map((e) => e.author)).toEqual(['user', 'lango-orchestrator', 'user', 'operator']);
  });
});
