import path from 'node:path';
import { LangoConfig, type LangoConfigInput } from '../../../src/config/schema';
import { createMemoryLogger, type MemoryLogger } from '../../../src/log/logger';
import { SecretRegistry } from '../../../src/log/redact';
import type { Model } from '../../../src/llm/model';
import { openDatabase } from '../../../src/store/database';
import type { ToolFamilyDeps } from '../../../src/tools/family';
import type { TurnRunner } from '../../../src/agent/turn';

/** A model for families that must not call one: any call fails the test loudly. */
const unusedModel: Model = {
  name: 'unused',
  // eslint-disable-next-line require-yield
  async *stream() {
    throw new Error('these tool families must not call the model');
  },
};

/** Real family deps over a temp data directory and a real SQLite file in it. */
export function familyDeps(
  dataDir: string,
  input: Omit<LangoConfigInput, 'dataDir'> = {},
): ToolFamilyDeps & { logger: MemoryLogger; close: () => void; toolChanges: { count: number } } {
  const config = LangoConfig.parse({ ...input, dataDir });
  const db = openDatabase(path.join(dataDir, 'lango.db'));
  const toolChanges = { count: 0 };
  return {
    config,
    dataDir,
    db,
    logger: createMemoryLogger(),
    secrets: new SecretRegistry(),
    clock: () => new Date(),
    model: unusedModel,
    turns: (): TurnRunner => {
      throw new Error('these tool families must not run turns');
    },
    agentNames: () => [],
    toolChanges,
    toolsChanged: () => void (toolChanges.count += 1),
    close: () => db.close(),
  };
}
