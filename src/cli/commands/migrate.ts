import path from 'node:path';
import { ExitCode } from '../io';
import { configFor } from '../context';
import type { CommandRun } from '../commandRun';

/**
 * `lango migrate`: applies the schema of the configured database and exits,
 * so an upgrade can migrate once before replicas of the new version start
 * (they would take turns under the migration lock anyway).
 */
export async function migrate({ ctx, globals }: CommandRun): Promise<number> {
  const { config } = await configFor(globals, ctx);
  if (config.storage.url) {
    const [{ migratePostgres }, { describeStorageUrl }] = await Promise.all([
      import('../../store/postgres/storage'),
      import('../../config/cluster'),
    ]);
    const applied = await migratePostgres(config.storage.url);
    ctx.io.out(`PostgreSQL ${describeStorageUrl(config.storage.url)}: ${applied} schema step(s) applied\n`);
  } else {
    const [{ openSqliteStorage }, { silentLogger }] = await Promise.all([
      import('../../store/sqlite/storage'),
      import('../../log/logger'),
    ]);
    const file = path.join(path.resolve(ctx.cwd, config.dataDir), 'lango.db');
    // Opening the storage applies every store's schema steps.
    await openSqliteStorage({ file, logger: silentLogger, clock: () => new Date() }).close();
    ctx.io.out(`SQLite ${file}: schema up to date\n`);
  }
  return ExitCode.ok;
}
