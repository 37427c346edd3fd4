/**
 * The dialect seam (issue 36): every store is written once, over this, and
 * runs on SQLite (`sqliteSql.ts`) and on PostgreSQL (`pgSql.ts`). SQL is
 * written once with `?` placeholders in the SQL both databases speak;
 * what really differs is answered behind the seam, one place per difference:
 * the schema steps (`StoreSchema`), who may write at once (SQLite's single
 * writer, PostgreSQL's advisory locks: {@link Sql.transaction}'s `lock`),
 * how a batch of rows is written in the group commit (`batch.ts`), full-text
 * search (`search.ts`), and the wake-ups of other replicas (PostgreSQL's
 * LISTEN/NOTIFY, `../postgres/listener.ts`).
 */

/** Which database a {@link Sql} speaks. */
export type Dialect = 'sqlite' | 'postgres';

/** One statement with its parameters, as the group commit takes it. */
export interface SqlStatement {
  text: string;
  params?: readonly unknown[];
}

/** What a statement of a group write returned: its rows (with RETURNING, or a SELECT) and how many rows it changed. */
export interface SqlResult {
  rows: Record<string, unknown>[];
  changes: number;
}

/**
 * A store's queued rows as statements, run in the group's transaction in
 * this order; no statement depends on an earlier one's result (on
 * PostgreSQL they are sent together).
 */
export interface SqlWrite {
  statements: SqlStatement[];
  /** Told each statement's result once the group has committed. */
  committed?(results: SqlResult[]): void;
}

/**
 * Takes a store's queued rows at the moment its group closes and returns
 * their write: rows queued while the group commits belong to the next one.
 * A store passes the same function on every call (it is the store's place
 * in the group).
 */
export type SqlBatch = () => SqlWrite;

/** Options of {@link Sql.transaction}. */
export interface TransactionOptions {
  /**
   * A name writers of one thing take turns on (a payment day, a task): on
   * PostgreSQL a transaction-scoped advisory lock, so replicas take turns;
   * SQLite has one writer, its transaction is the lock already.
   */
  lock?: string;
}

/**
 * A database as a store uses it: async, row-shaped, `?` placeholders.
 * Integers that PostgreSQL keeps as BIGINT come back as text there and as
 * numbers in SQLite; booleans as `true`/`false` there and `1`/`0` here:
 * read them with `Number(...)` and {@link truthy}.
 */
export interface Sql {
  readonly dialect: Dialect;
  /** Every row `text` returns. */
  all<T>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** The first row `text` returns, if any. */
  get<T>(text: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** Runs `text`; resolves with how many rows it changed. */
  run(text: string, params?: readonly unknown[]): Promise<number>;
  /**
   * Runs `work` in one transaction: committed if it resolves, rolled back
   * if it throws. `work` must query through the `Sql` it is given only.
   */
  transaction<T>(work: (tx: Sql) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Queues `batch`'s write into the database's group commit (one
   * transaction carries many stores' rows); resolves once committed,
   * rejects with the write's own error.
   */
  write(batch: SqlBatch): Promise<void>;
  /** Resolves once every write queued before the call has committed (or failed). */
  flush(): Promise<void>;
}

/** A boolean as either database returns it (`1`/`0` from SQLite). */
export const truthy = (value: unknown): boolean => value === true || value === 1 || value === '1' || value === 't';

/** `?, ?, ?` for `count` values (at least one `?`: an empty `IN ()` is not SQL). */
export function inList(count: number): string {
  return Array.from({ length: Math.max(1, count) }, () => '?').join(', ');
}

/**
 * A store's schema steps on each database, applied once each, in order,
 * recorded under `store` in `schema_migrations`. Append-only: never edit a
 * step that has shipped, add the next. The two lists differ where the
 * databases do (FTS5 against tsvector, `INTEGER PRIMARY KEY` against
 * `BIGSERIAL`) and in history (SQLite's steps reshaped tables PostgreSQL
 * was created with).
 */
export interface StoreSchema {
  store: string;
  sqlite: readonly string[];
  postgres: readonly string[];
}
