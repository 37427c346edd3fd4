import { Pool, type PoolClient, type QueryConfig, type QueryResultRow } from 'pg';
import { chunksOf } from '../sql/dialect';

/**
 * The node's PostgreSQL connection pool; every store takes it as a
 * dependency. Ids are text columns (A2A clients send ids longer than a
 * UUID) and times ISO-8601 text, as in SQLite, so both databases answer alike.
 */
export type PgDatabase = Pool;

/** Something queries run on: the pool, or one client inside a transaction. */
export type PgQueryable = Pick<PoolClient, 'query'>;

/** The longest a query waits for a connection (a new one, or a free one of a busy pool). */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Opens a pool on `url` (`postgres://user:pass@host:port/db`); nothing
 * connects until the first query. `pipeline`: each connection sends a query
 * without waiting for the previous one's answer (the group commit's pool).
 */
export function openPgDatabase(url: string, options: { max?: number; pipeline?: boolean } = {}): PgDatabase {
  const pool = new Pool({
    connectionString: url,
    max: options.max ?? 10,
    pipeline: options.pipeline ?? false,
    // A database cut off by the network answers nothing: a query waiting for a connection fails instead of hanging.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
  });
  // A client whose server went away emits `error`: on the pool when idle, on the client itself when checked out
  // (between two statements of a transaction). Unheard, either ends the process; its queries fail on their own.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * The statements binding a batch of rows: one named statement per run of
 * `chunksOf` (`<name>_<n>` for a run of n rows), its text `textOf(n)` made
 * once per n, its parameters `leading` then each row's `valuesOf`.
 * @example
 * const upsert = rowStatements('things_write', (n) => `INSERT INTO things SELECT * FROM ${valuesList('postgres', ['text'], n, 1)} v`, (t: Thing) => [t.id]);
 * group.schedule(() => ({ statements: upsert(things) }));
 */
export function rowStatements<T>(
  name: string,
  textOf: (rows: number) => string,
  valuesOf: (row: T) => unknown[],
): (rows: readonly T[], ...leading: unknown[]) => QueryConfig[] {
  const texts: string[] = [];
  return (rows, ...leading) =>
    chunksOf(rows).map((run) => ({
      name: `${name}_${run.length}`,
      text: (texts[run.length - 1] ??= textOf(run.length)),
      values: [...leading, ...run.flatMap(valuesOf)],
    }));
}

/**
 * Runs `sql` and resolves with its rows. A hot query passes a named query
 * config instead: PostgreSQL then parses and plans it once per connection.
 */
export async function rows<T extends QueryResultRow>(
  db: PgQueryable,
  sql: string | QueryConfig,
  params: unknown[] = [],
): Promise<T[]> {
  return (typeof sql === 'string' ? await db.query<T>(sql, params) : await db.query<T>(sql)).rows;
}

/** Row ids (decimal text) for `= ANY($n::bigint[])`, dropping any that is not one: such an id matches no row. */
export function rowIds(ids: string[]): string[] {
  return ids.filter((id) => /^\d{1,18}$/.test(id));
}

/**
 * Runs `work` in one transaction on one client of the pool: committed if it resolves, rolled back if it throws.
 * `lock`: a name writers take turns on (a transaction-scoped advisory lock on its hash).
 */
export async function transaction<T>(
  db: PgDatabase,
  work: (client: PoolClient) => Promise<T>,
  lock?: QueryConfig,
): Promise<T> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    if (lock) await client.query(lock);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** One store's schema steps: append-only, never edit one that has shipped. */
export interface PgSchema {
  store: string;
  steps: string[];
}

/**
 * The advisory lock replicas take to migrate: replicas starting together
 * take turns, the first applies the steps, the others find them applied.
 */
export const MIGRATION_LOCK = 0x6c616e67; // 'lang'

/**
 * Applies each schema's steps once, in order, recording them in
 * `schema_migrations` (store, step), all under one session advisory lock.
 * Each step and its record commit together. Resolves with how many steps ran.
 */
export async function migrate(db: PgDatabase, schemas: PgSchema[]): Promise<number> {
  const client = await db.connect();
  let applied = 0;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        store TEXT NOT NULL, step INTEGER NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (store, step))`);
      const done = new Set(
        (await rows<{ store: string; step: number }>(client, 'SELECT store, step FROM schema_migrations')).map(
          (r) => `${r.store}\u0000${r.step}`,
        ),
      );
      for (const { store, steps } of schemas) {
        for (const [index, sql] of steps.entries()) {
          if (done.has(`${store}\u0000${index}`)) continue;
          await client.query('BEGIN');
          try {
            await client.query(sql);
            await client.query('INSERT INTO schema_migrations (store, step, applied_at) VALUES ($1, $2, $3)', [
              store,
              index,
              new Date().toISOString(),
            ]);
            await client.query('COMMIT');
            applied += 1;
          } catch (err) {
            await client.query('ROLLBACK').catch(() => {});
            throw new Error(`migration ${store} step ${index} failed: ${(err as Error).message}`, { cause: err });
          }
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  } finally {
    client.release();
  }
  return applied;
}
