import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../../privateFiles';

/** The node's one SQLite database handle; every store takes it as a dependency. */
export type SqliteDatabase = Database.Database;

/**
 * Opens (creating if needed) the node's SQLite database file with WAL
 * journaling, so readers never block the writer and a kill -9 loses nothing
 * committed.
 */
export function openDatabase(file: string): SqliteDatabase {
  if (file !== ':memory:') {
    makePrivateDir(path.dirname(file));
    // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database's own mode.
    fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE_MODE));
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  cacheStatements(db);
  return db;
}

const MAX_CACHED_STATEMENTS = 500;

/**
 * Makes `db.prepare(sql)` return one statement per distinct SQL text.
 * Stores prepare where they query (readable), and compiling SQL on every call
 * was a tenth of a request's CPU on the node's hot path. A statement is
 * reusable for any arguments; only re-entrant `iterate()` over the same SQL
 * would need two, which no store does.
 */
function cacheStatements(db: SqliteDatabase): void {
  const prepare = db.prepare.bind(db);
  const statements = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = prepare(sql);
      // SQL built from varying parts must not grow the cache without end: drop the oldest.
      if (statements.size >= MAX_CACHED_STATEMENTS) statements.delete(statements.keys().next().value as string);
      statements.set(sql, statement);
    }
    return statement;
  }) as SqliteDatabase['prepare'];
}

/**
 * Applies a store's schema steps once each, in order, recording them in
 * `schema_migrations` under `store`. Steps are append-only: never edit one
 * that has shipped, add the next.
 */
export function migrate(db: SqliteDatabase, store: string, steps: string[]): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    store TEXT NOT NULL, step INTEGER NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (store, step))`);
  const applied = new Set(
    (db.prepare('SELECT step FROM schema_migrations WHERE store = ?').all(store) as { step: number }[]).map(
      (r) => r.step,
    ),
  );
  const record = db.prepare('INSERT INTO schema_migrations (store, step, applied_at) VALUES (?, ?, ?)');
  steps.forEach((sql, index) => {
    if (applied.has(index)) return;
    db.transaction(() => {
      db.exec(sql);
      record.run(store, index, new Date().toISOString());
    })();
  });
}
