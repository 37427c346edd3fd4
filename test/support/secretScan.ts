import Database from 'better-sqlite3';
import { Client } from 'pg';

/**
 * Every table of a SQLite file (full-text shadow tables too) and each cell
 * holding `value`, as `table.column`: what a person reading the file with
 * any SQLite client would find.
 * @example
 * expect(sqliteCellsHolding(path.join(dataDir, 'lango.db'), secret)).toEqual([]);
 */
export function sqliteCellsHolding(file: string, value: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[];
    if (tables.length === 0) throw new Error(`no tables in ${file}`);
    const found = new Set<string>();
    for (const { name } of tables) {
      for (const row of db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[]) {
        for (const [column, cell] of Object.entries(row)) {
          const text = Buffer.isBuffer(cell) ? cell.toString('latin1') : String(cell);
          if (text.includes(value)) found.add(`${name}.${column}`);
        }
      }
    }
    return [...found];
  } finally {
    db.close();
  }
}

/**
 * Every table of every schema of a PostgreSQL database (the job queue's
 * own schema too) with a row holding `value`, whole rows read as text
 * (`bytea` as hex, so the value's hex is looked for too).
 * @example
 * expect(await postgresTablesHolding(url, secret)).toEqual([]);
 */
export async function postgresTablesHolding(url: string, value: string): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ name: string }>(
      `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
       WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
    );
    if (tables.length === 0) throw new Error('no tables in the database');
    const hex = Buffer.from(value).toString('hex');
    const found: string[] = [];
    for (const { name } of tables) {
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${name} t WHERE strpos(t::text, $1) > 0 OR strpos(t::text, $2) > 0`,
        [value, hex],
      );
      if (Number(rows[0]!.n) > 0) found.push(name);
    }
    return found;
  } finally {
    await client.end();
  }
}
