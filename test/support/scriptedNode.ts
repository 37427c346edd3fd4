import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';
import { scriptedAgent, startOpenAIServer, type OpenAIServer } from './openaiServer';

/** A whole node on 127.0.0.1 whose model is a scripted OpenAI-compatible server, reached by the real `openai` client. */
export interface ScriptedNode {
  url: string;
  model: OpenAIServer;
  app: LangoApp;
  /** Closes the node and the model server and removes the data folder. */
  close(): Promise<void>;
}

/**
 * Starts a node on a free port with a fresh data folder and its own scripted model (no browser).
 * @example
 * const node = await startScriptedNode({ apiKey: 'sk-test' });
 * node.model.push({ text: 'hello' });
 */
export async function startScriptedNode(options: { apiKey: string }): Promise<ScriptedNode> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-scripted-'));
  const model = await startOpenAIServer();
  const config = resolveConfig({
    server: { port: 0 },
    dataDir,
    agent: { ...scriptedAgent(model), apiKey: options.apiKey },
    tools: { browser: { enabled: false } },
  });
  const app = await createApp(config, { logger: createMemoryLogger() });
  return {
    url: await app.listen(),
    model,
    app,
    async close() {
      await app.close();
      await model.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
