/**
 * One flat agent (`agent.multiAgent: false`) with a tool of your own, driven
 * by the embedded offline model. `npm run examples` compiles and runs all three examples.
 */
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { z } from 'zod';
import {
  buildAgentTree,
  createOfflineModel,
  createRunner,
  defineTool,
  openSqliteStorage,
  OWNER,
  runToEnd,
  silentLogger,
} from 'lango';

export async function main(dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-example-'))): Promise<string> {
  const dice = defineTool({
    name: 'exec_roll',
    description: 'Rolls a die with the given number of sides.',
    parameters: z.object({ sides: z.number().int().min(2).max(100) }),
    execute: async ({ sides }) => ({ rolled: 1 + Math.floor(Math.random() * sides) }),
  });
  const root = buildAgentTree({ tools: [dice], model: createOfflineModel(), multiAgent: false });
  const storage = openSqliteStorage({
    file: path.join(dataDir, 'example.db'),
    logger: silentLogger,
    clock: () => new Date(),
  });
  try {
    const runner = createRunner({
      tree: { current: () => root },
      sessions: storage.stores.sessions,
      logger: silentLogger,
      maxDelegationRounds: 5,
      maxTurnsPerAgent: 5,
    });
    // This program is the node's owner: the conversation and anything stored are the owner's.
    const result = await runToEnd(runner, { principal: OWNER, sessionId: 'example', text: 'exec_roll {"sides": 6}' });
    return `${result.author}: ${result.text}`;
  } finally {
    await storage.close();
  }
}

if (require.main === module) void main().then((line) => process.stdout.write(line + '\n'));
