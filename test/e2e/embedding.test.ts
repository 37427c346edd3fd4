import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { z } from 'zod';
import {
  createApp,
  createMemoryLogger,
  createToolset,
  defineTool,
  partitionTools,
  resolveConfig,
  type LangoApp,
  type ToolFamily,
} from 'lango';
import { translator, translatorTools } from '../../examples/custom-specialist';
import { a2aClient, answerText, asTask, textRequest } from '../support/a2aClient';
import { openTestStorage } from '../support/storage';
import { testFamilyDeps } from '../support/familyDeps';

/**
 * The embedding API of issue 14 (item 3), used as an embedder would: the
 * package imported by its name, a specialist of one's own and tools made with
 * `defineTool` given to `createApp`, then driven over A2A by the real SDK
 * client against the node on 127.0.0.1.
 */
describe('a node built with custom tools and a custom specialist', () => {
  let dataDir: string;
  let app: LangoApp;
  let url: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-embed-'));
    const config = resolveConfig({ server: { port: 0 }, dataDir, tools: { browser: { enabled: false } } });
    app = await createApp(config, {
      logger: createMemoryLogger(),
      tools: translatorTools,
      specialists: [translator],
    });
    url = await app.listen();
  });

  afterAll(async () => {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates the translator with the tool its prefix routes and the tool that names it', () => {
    const translatorAgent = app.root().subAgents.find((agent) => agent.name === 'translator');
    expect(translatorAgent?.kind === 'llm' && translatorAgent.tools.map((t) => t.name)).toEqual([
      'translate_upper',
      'reverse_text',
    ]);
    expect(app.unmatchedTools()).toEqual([]);
    expect(app.root().instruction).toContain('### translator');
  });

  it('shows the translator on the agent card the SDK client reads', async () => {
    const client = await a2aClient(url, 'JSONRPC');
    const card = await client.getAgentCard();
    expect(card.skills.map((skill) => skill.id)).toContain('translator');
  });

  it('delegates a message naming reverse_text to the translator, which runs it', async () => {
    const client = await a2aClient(url, 'JSONRPC');
    const task = asTask(await client.sendMessage(textRequest('reverse_text {"text": "lango"}')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(task)).toBe('Result of reverse_text:\nognal');
  });

  it('answers a call with a wrong argument name with the fields the tool expects', async () => {
    const client = await a2aClient(url, 'HTTP+JSON');
    const task = asTask(await client.sendMessage(textRequest('reverse_text {"data": "lango"}')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const answer = answerText(task);
    expect(answer).toContain('tool reverse_text failed: invalid arguments');
    expect(answer).toContain('"data" is not an argument');
    expect(answer).toContain('expected fields: text (string)');
  });
});

describe('where tools land', () => {
  it('refuses a tool whose agent names no specialist, naming the specialists there are', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-embed-'));
    try {
      const stray = defineTool({
        name: 'stray',
        agent: 'translator',
        description: 'x',
        parameters: z.object({}),
        execute: async () => 'x',
      });
      await expect(
        createApp(resolveConfig({ dataDir, tools: { browser: { enabled: false } } }), {
          logger: createMemoryLogger(),
          tools: [stray],
        }),
      ).rejects.toThrow(/tools\[0\]\.agent: "translator" is not a specialist of this node \(operator, /);
      expect(fs.existsSync(path.join(dataDir, 'lango.db'))).toBe(false);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("puts a family's tools with the family's agent whatever their prefix", async () => {
    const storage = openTestStorage();
    try {
      const deploy = defineTool({
        name: 'deploy_site',
        description: 'Deploys the site.',
        parameters: z.object({}),
        execute: async () => 'deployed',
      });
      const family: ToolFamily = {
        name: 'deploy',
        agent: 'operator',
        enabled: () => true,
        create: () => ({ tools: [deploy] }),
      };
      const deps = await testFamilyDeps({ storage: storage.storage, dataDir: storage.dir });
      const toolset = await createToolset([family], deps);
      const set = partitionTools(toolset.tools);
      expect(set.operator.map((t) => t.name)).toEqual(['deploy_site']);
      expect(set.unmatched).toEqual([]);
      // The same tagged tool on every read, so a rebuilt tree sees the same objects.
      expect(toolset.tools[0]).toBe(toolset.tools[0]);
      await toolset.close();
    } finally {
      await storage.close();
    }
  });
});
