import type { Sql, SqlBatch, SqlResult, SqlStatement } from '../sql/sql';
import type { SqliteDatabase } from './database';
import type { GroupCommit, QueuedWriter } from './groupCommit';

/** SQLite binds numbers, strings, bigints, buffers and null: a boolean is bound as 1 or 0. */
const bindable = (params: readonly unknown[]): unknown[] =>
  params.map((value) => (value === true ? 1 : value === false ? 0 : value));

/**
 * The dialect seam on the node's SQLite file: statements run at once on the
 * one handle (better-sqlite3 is synchronous; its statements are prepared
 * once per text, `database.ts`). One process writes: a transaction is
 * `BEGIN IMMEDIATE`, and while one is open every other call on this handle
 * waits for it to end, so nothing another caller runs lands inside it.
 * Group writes join the database's one group commit.
 * @example
 * const sql = createSqliteSql(db, group);
 * const rows = await sql.all<{ id: string }>('SELECT id FROM node_identity');
 */
export function createSqliteSql(db: SqliteDatabase, group: GroupCommit): Sql {
  // One per handle: a transaction keeps out every other caller of the handle only if they share it.
  let sql = opened.get(db);
  if (!sql) opened.set(db, (sql = openSqliteSql(db, group)));
  return sql;
}

const opened = new WeakMap<SqliteDatabase, Sql>();

function openSqliteSql(db: SqliteDatabase, group: GroupCommit): Sql {
  /** The transaction under way: calls from outside it wait for its end. */
  let open: Promise<void> | undefined;
  const idle = async () => {
    while (open) await open;
  };
  const direct: Omit<Sql, 'transaction' | 'write' | 'flush'> = {
    dialect: 'sqlite',
    async all<T>(text: string, params: readonly unknown[] = []) {
      return db.prepare(text).all(...bindable(params)) as T[];
    },
    async get<T>(text: string, params: readonly unknown[] = []) {
      return db.prepare(text).get(...bindable(params)) as T | undefined;
    },
    async run(text: string, params: readonly unknown[] = []) {
      return db.prepare(text).run(...bindable(params)).changes;
    },
  };
  /** Each store's batch as the group commit's writer, made once (the group runs a writer once per commit). */
  const writers = new Map<SqlBatch, QueuedWriter>();
  /** Each batch's `committed` hook from the group it last ran in: its first caller to hear the commit tells it. */
  const toTell = new Map<SqlBatch, () => void>();
  const execute = (statement: SqlStatement): SqlResult => {
    const prepared = db.prepare(statement.text);
    const params = bindable(statement.params ?? []);
    if (prepared.reader) return { rows: prepared.all(...params) as Record<string, unknown>[], changes: 0 };
    return { rows: [], changes: prepared.run(...params).changes };
  };
  const writerOf = (batch: SqlBatch): QueuedWriter => {
    let writer = writers.get(batch);
    if (!writer) {
      writer = () => {
        const write = batch();
        const results = write.statements.map(execute);
        if (write.committed) toTell.set(batch, () => write.committed!(results));
        else toTell.delete(batch);
      };
      writers.set(batch, writer);
    }
    return writer;
  };
  const plain = (): Sql => ({
    ...direct,
    all: async (text, params) => (open && (await idle()), direct.all(text, params)),
    get: async (text, params) => (open && (await idle()), direct.get(text, params)),
    run: async (text, params) => (open && (await idle()), direct.run(text, params)),
    async transaction(work) {
      // Checked and taken with no await between: of transactions waiting together, one goes first.
      while (open) await open;
      let end!: () => void;
      open = new Promise<void>((resolve) => (end = resolve));
      const inside: Sql = { ...direct, transaction: (nested) => nested(inside), write, flush };
      try {
        db.exec('BEGIN IMMEDIATE');
        const result = await work(inside);
        db.exec('COMMIT');
        return result;
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw err;
      } finally {
        open = undefined;
        end();
      }
    },
    write,
    flush,
  });
  async function write(batch: SqlBatch): Promise<void> {
    await group.schedule(writerOf(batch));
    const hook = toTell.get(batch);
    toTell.delete(batch);
    hook?.();
  }
  async function flush(): Promise<void> {
    await idle();
    group.flush();
  }
  return plain();
}
