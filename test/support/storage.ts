import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { openSqliteStorage, type SqliteStorage } from '../../src/store/sqlite/storage';

/** A real SQLite storage in a fresh temp dir: `reopen` closes it and opens the same file again; `close` removes it. */
export function openTestStorage(
  options: { clock?: () => Date; logger?: MemoryLogger; redact?: (text: string) => string; prefix?: string } = {},
) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), options.prefix ?? 'lango-store-'));
  const file = path.join(dir, 'lango.db');
  const logger = options.logger ?? createMemoryLogger();
  const open = () =>
    openSqliteStorage({ file, logger, clock: options.clock ?? (() => new Date()), redact: options.redact });
  let storage: SqliteStorage = open();
  return {
    dir,
    file,
    logger,
    get storage() {
      return storage;
    },
    get stores() {
      return storage.stores;
    },
    get db() {
      return storage.db;
    },
    /** As the node does at shutdown: queued writes land before the file closes. */
    async reopen() {
      await storage.close();
      storage = open();
    },
    async close() {
      await storage.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `read` on a read-only handle of a node's SQLite file (`<dataDir>/lango.db`), closed after: tests that check rows. */
export function readNodeDatabase<T>(app: { dataDir: string }, read: (db: Database.Database) => T): T {
  const db = new Database(path.join(app.dataDir, 'lango.db'), { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}
