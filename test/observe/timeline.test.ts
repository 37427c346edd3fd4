import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import type { TaskTimeline } from '../../src/observe/timeline';
import {
  callTool,
  say,
  scriptedAgent,
  startOpenAIServer,
  transferTo,
  type OpenAIServer,
  type ScriptedCompletion,
} from '../support/openaiServer';

/**
 * A real node (createApp) on loopback, its model a scripted OpenAI-compatible server; its task timelines read
 * over HTTP as the console reads them.
 */
describe('task timelines', () => {
  let app: LangoApp | undefined;
  let model: OpenAIServer | undefined;
  let dir: string;
  afterEach(async () => {
    await app?.close();
    expect(model?.unexpected).toEqual([]);
    await model?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function node(input: LangoConfigInput, answers: ScriptedCompletion[]): Promise<string> {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-timeline-'));
    model = await startOpenAIServer(answers);
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      tools: { browser: { enabled: false } },
      ...input,
      agent: { ...scriptedAgent(model), ...input.agent },
    });
    app = await createApp(config, { logger: createMemoryLogger() });
    return app.listen();
  }

  it("records a task's transfer, tool call (arguments redacted and shortened) and model tokens, served to the owner", async () => {
    const secret = 'sk-live-0123456789abcdef';
    const url = await node({ agent: { apiKey: secret } }, [
      transferTo('librarian'),
      callTool('save_knowledge', { key: 'pets', content: `my cat is Tom; token ${secret}; ${'x'.repeat(400)}` }),
      { text: 'Saved.', usage: { prompt_tokens: 7, completion_tokens: 2 } },
    ]);
    const reply = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'tl-1', role: 'ROLE_USER', parts: [{ text: 'remember my cat' }] } },
      }),
    });
    const task = ((await reply.json()) as { result: { task: { id: string; status: { state: string } } } }).result.task;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');

    const answer = await fetch(`${url}/console/api/timelines/${task.id}`);
    expect(answer.status).toBe(200);
    const { turns } = (await answer.json()) as { turns: TaskTimeline[] };
    expect(turns).toHaveLength(1);
    const [turn] = turns;
    expect(turn).toMatchObject({ taskId: task.id, caller: 'owner', status: 'completed', agent: 'librarian' });
    expect(turn.steps.map((s) => `${s.kind} ${s.name}`)).toEqual([
      'agent lango-orchestrator',
      'model openai:scripted',
      'transfer librarian',
      'agent librarian',
      'model openai:scripted',
      'tool save_knowledge',
      'model openai:scripted',
    ]);
    const tool = turn.steps.find((s) => s.kind === 'tool')!;
    expect(tool.agent).toBe('librarian');
    expect(tool.args).toContain('my cat is Tom');
    expect(tool.args).not.toContain(secret);
    expect(tool.args!.length).toBeLessThanOrEqual(241);
    expect(tool.ms).toEqual(expect.any(Number));
    expect(turn.steps.at(-1)).toMatchObject({ inputTokens: 7, outputTokens: 2 });
    expect(JSON.stringify(turns)).not.toContain(secret);

    expect((await fetch(`${url}/console/api/timelines/no-such-task`)).status).toBe(404);
  });

  it('refuses a caller that is not the owner', async () => {
    const url = await node({ a2a: { auth: { bearerTokens: ['caller-token-9'] } } }, [say('hi')]);
    expect((await fetch(`${url}/console/api/timelines`)).status).toBe(401);
    const caller = await fetch(`${url}/console/api/timelines`, { headers: { authorization: 'Bearer caller-token-9' } });
    expect(caller.status).toBe(403);
  });
});
