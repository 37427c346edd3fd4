import fs from 'node:fs';
import type { Logger } from '../../log/logger';
import type { StoreHealth } from '../index';
import type { SqliteDatabase } from './database';

/**
 * The health of the SQLite file the node writes: the handle is open, a read
 * of the schema answers (each read transaction checks the file's header, so
 * this is the file, not a cache), and the file at its path is still the one
 * open. A file deleted or replaced under the node would keep answering
 * through the handle while nothing it writes lands where a restart looks.
 * @example
 * const health = sqliteHealth({ db, file, logger });
 * if (!health().ok) ...
 */
export function sqliteHealth(options: { db: SqliteDatabase; file: string; logger: Logger }): () => StoreHealth {
  const { db, file } = options;
  const onDisk = file !== ':memory:';
  const opened = onDisk ? identity(file) : undefined;
  let reported: string | undefined;
  const down = (problem: Exclude<StoreHealth, { ok: true }>['problem'], detail: string): StoreHealth => {
    // Logged once per problem: a balancer probes every half second.
    if (reported !== detail) options.logger.warn('the database file does not answer', { problem, detail });
    reported = detail;
    return { ok: false, problem };
  };
  return () => {
    if (!db.open) return down('closed', 'the handle is closed');
    try {
      db.prepare('SELECT count(*) FROM sqlite_master').get();
    } catch (err) {
      return down('unavailable', err instanceof Error ? err.message : String(err));
    }
    if (onDisk) {
      const now = identity(file);
      if (!now) return down('file missing', `${file} is gone`);
      if (opened && (now.dev !== opened.dev || now.ino !== opened.ino))
        return down('file replaced', `${file} is another file than the one open`);
    }
    reported = undefined;
    return { ok: true };
  };
}

/** The file's device and inode, or undefined when there is none. */
function identity(file: string): { dev: number; ino: number } | undefined {
  try {
    const { dev, ino } = fs.statSync(file);
    return { dev, ino };
  } catch {
    return undefined;
  }
}
