import path from 'node:path';
import type { LangoConfigInput } from '../../../src/config/schema';
import { createMemoryLogger, type MemoryLogger } from '../../../src/log/logger';
import { openSqliteStorage, type SqliteStorage } from '../../../src/store/sqlite/storage';
import type { ToolFamilyDeps } from '../../../src/toolset/family';
import { testFamilyDeps } from '../../support/familyDeps';

/** Real family deps over a temp data directory and a real SQLite file in it. */
export async function familyDeps(
  dataDir: string,
  input: Omit<LangoConfigInput, 'dataDir'> = {},
): Promise<
  ToolFamilyDeps & {
    logger: MemoryLogger;
    storage: SqliteStorage;
    close: () => Promise<void>;
    toolChanges: { count: number };
  }
> {
  const storage = openSqliteStorage({
    file: path.join(dataDir, 'lango.db'),
    logger: createMemoryLogger(),
    clock: () => new Date(),
  });
  const deps = await testFamilyDeps({ storage, dataDir, config: input });
  return { ...deps, storage, close: () => storage.close() };
}
