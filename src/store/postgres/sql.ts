import type { QueryConfig, QueryResult } from 'pg';
import type { Sql, SqlBatch, SqlStatement, TransactionOptions } from '../sql/sql';
import { transaction as inTransaction, type PgDatabase, type PgQueryable } from './database';
import type { PgGroupCommit, PgQueuedBatch } from './groupCommit';

/**
 * Distinct statement texts given a name of their own. PostgreSQL parses and
 * plans a named statement once per connection; a store whose SQL varies
 * with its input (an `IN` list) must not grow every connection's statements
 * without end, so texts past this many run unnamed.
 */
const MAX_NAMED = 1_000;

/** A statement text as PostgreSQL takes it: `$n` placeholders, and its name once prepared. */
interface Translated {
  text: string;
  name?: string;
}

/**
 * The dialect seam on PostgreSQL (`../sql/sql.ts`): `?` placeholders become
 * `$1…$n` (once per text), every text of the stores is a named prepared
 * statement, and group writes join the database's pipelined group commit.
 * A transaction's `lock` is a transaction-scoped advisory lock, so writers
 * on every replica take turns on it.
 * @example
 * const sql = createPgSql(db, group);
 * const rows = await sql.all<{ id: string }>('SELECT id FROM node_identity');
 */
export function createPgSql(db: PgDatabase, group: PgGroupCommit): Sql {
  // One per pool: two would give one statement name two texts on a connection.
  let sql = opened.get(db);
  if (!sql) opened.set(db, (sql = openPgSql(db, group)));
  return sql;
}

const opened = new WeakMap<PgDatabase, Sql>();

function openPgSql(db: PgDatabase, group: PgGroupCommit): Sql {
  const texts = new Map<string, Translated>();
  const translate = (text: string): Translated => {
    let translated = texts.get(text);
    if (!translated) {
      translated = { text: numbered(text), ...(texts.size < MAX_NAMED ? { name: `lango_${texts.size}` } : {}) };
      texts.set(text, translated);
    }
    return translated;
  };
  const config = (text: string, params: readonly unknown[] = []): QueryConfig => ({
    ...translate(text),
    values: params as unknown[],
  });
  const on = (client: PgQueryable): Sql => ({
    dialect: 'postgres',
    all: async <T>(text: string, params?: readonly unknown[]) => (await client.query(config(text, params))).rows as T[],
    get: async <T>(text: string, params?: readonly unknown[]) =>
      (await client.query(config(text, params))).rows[0] as T | undefined,
    run: async (text, params) => (await client.query(config(text, params))).rowCount ?? 0,
    transaction: (work, options) => (client === db ? transaction(work, options) : work(on(client))),
    write,
    flush: () => group.flush(),
  });
  const transaction = <T>(work: (tx: Sql) => Promise<T>, options: TransactionOptions = {}): Promise<T> =>
    inTransaction(
      db,
      (client) => work(on(client)),
      options.lock === undefined ? undefined : config('SELECT pg_advisory_xact_lock(hashtext(?))', [options.lock]),
    );
  /** Each store's batch as the group commit takes it, made once (the group keys a store's place by it). */
  const batches = new Map<SqlBatch, PgQueuedBatch>();
  const statement = (s: SqlStatement) => config(s.text, s.params);
  function write(batch: SqlBatch): Promise<void> {
    let queued = batches.get(batch);
    if (!queued) {
      queued = () => {
        const { statements, committed } = batch();
        return {
          statements: statements.map(statement),
          ...(committed && {
            committed: (results: QueryResult[]) =>
              committed(results.map((r) => ({ rows: r.rows as Record<string, unknown>[], changes: r.rowCount ?? 0 }))),
          }),
        };
      };
      batches.set(batch, queued);
    }
    return group.schedule(queued);
  }
  return on(db);
}

/** `text` with each `?` outside quotes numbered `$1…$n`. */
export function numbered(text: string): string {
  let n = 0;
  let quoted = false;
  let out = '';
  for (const char of text) {
    if (char === "'") quoted = !quoted;
    out += char === '?' && !quoted ? `$${++n}` : char;
  }
  return out;
}
