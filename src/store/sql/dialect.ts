import { bm25Score, ftsQuery } from '../sqlite/fts';
import { rankScore, tsQuery } from '../postgres/fts';
import type { Dialect } from './sql';

/**
 * The SQL fragments that differ between the two databases, each in one
 * place: the stores written once (`sql/*.ts`) put them where the databases
 * disagree.
 */

/**
 * Text compared byte by byte: SQLite's default (BINARY); PostgreSQL's
 * `COLLATE "C"`. Lists ordered by names read alike on both.
 */
export const bytewise = (dialect: Dialect, column: string): string =>
  dialect === 'postgres' ? `${column} COLLATE "C"` : column;

/** `(? IS NULL OR column = ?)`, typed so PostgreSQL can plan it: bind the value twice. */
export const anyOrEqual = (column: string): string => `(CAST(? AS TEXT) IS NULL OR ${column} = ?)`;

/** `a.x, a.y` of `x, y`: a column list read through a table's alias. */
export const columnsOf = (alias: string, columns: string): string =>
  columns
    .split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');

/** One full-text search of a table by the database's own index (SQLite: its FTS5 twin; PostgreSQL: its tsvector). */
export interface TextSearch {
  /** The query for the database, `undefined` when the text has no word to search for. */
  query(text: string, options?: { prefixes?: boolean }): string | undefined;
  /** The rank of a row of `table` as `alias` (`weights`: its columns' weights, SQLite's bm25 arguments). */
  rank(table: string, alias: string, weights?: string): string;
  /** `FROM <table> <alias> … WHERE <match>`, binding the query (its first `?`); more conditions go after `AND`. */
  from(table: string, alias: string): string;
  /** The rank ordering best first. */
  best: string;
  /** The rank as a score shown to a model: positive, higher first, four significant digits. */
  score(rank: number): number;
}

/** Full-text search on each database. */
export function textSearch(dialect: Dialect): TextSearch {
  if (dialect === 'sqlite')
    return {
      query: ftsQuery,
      rank: (table, _alias, weights) => `bm25(${table}_fts${weights ? `, ${weights}` : ''})`,
      from: (table, alias) =>
        `FROM ${table}_fts JOIN ${table} ${alias} ON ${alias}.id = ${table}_fts.rowid WHERE ${table}_fts MATCH ?`,
      best: 'rank',
      score: bm25Score,
    };
  return {
    query: tsQuery,
    rank: (_table, alias) => `ts_rank(${alias}.search, q.q)`,
    from: (table, alias) =>
      `FROM ${table} ${alias}, (SELECT to_tsquery('english', ?) AS q) q WHERE ${alias}.search @@ q.q`,
    best: 'rank DESC',
    score: rankScore,
  };
}

/** A column of a bound table: its name and PostgreSQL type. */
export type BoundColumn = [string, 'text' | 'integer' | 'boolean'];

/** A table of bound rows, as one statement's `FROM` source and its parameters. */
export interface BoundRows {
  from: string;
  params: unknown[];
}

/**
 * SQLite's statements are cached by text (`database.ts`), and a table of n
 * rows is one text per n: at most this many rows per table keeps the texts
 * few.
 */
const SQLITE_ROWS_PER_TABLE = 64;

/** Rows bound as tables a group's statements read from: one statement per table, none for no rows. */
export type BoundTables = (rows: readonly unknown[][]) => BoundRows[];

/**
 * How `dialect` binds rows of `columns` (arrays in that order) as tables,
 * each table's text made once. SQLite binds them as `VALUES`, at most
 * {@link SQLITE_ROWS_PER_TABLE} a table (reading them from one JSON
 * parameter instead cost some 15 µs a message row); on PostgreSQL they are
 * one JSON parameter read with `jsonb_array_elements` (one text whatever
 * the count; parsed once, where every `->>` of `json` parses its element
 * again).
 */
export function boundTables(dialect: Dialect, columns: readonly BoundColumn[]): BoundTables {
  if (dialect === 'postgres') {
    const cast = (type: string, i: number) => (type === 'text' ? `r ->> ${i}` : `CAST(r ->> ${i} AS ${type})`);
    const from = `(SELECT ${columns.map(([name, type], i) => `${cast(type, i)} AS ${name}`).join(', ')}
      FROM jsonb_array_elements(CAST(? AS jsonb)) r)`;
    return (rows) => (rows.length === 0 ? [] : [{ from, params: [JSON.stringify(rows)] }]);
  }
  const names = columns.map(([name], i) => `column${i + 1} AS ${name}`).join(', ');
  const row = `(${columns.map(() => '?').join(', ')})`;
  /** The text of a table of n rows, at n - 1: the same string each time, so the statement cache finds it at once. */
  const texts: string[] = [];
  const fromOf = (n: number) =>
    (texts[n - 1] ??= `(SELECT ${names} FROM (VALUES ${Array.from({ length: n }, () => row).join(', ')}))`);
  return (rows) => {
    const tables: BoundRows[] = [];
    for (let start = 0; start < rows.length; start += SQLITE_ROWS_PER_TABLE) {
      const end = Math.min(rows.length, start + SQLITE_ROWS_PER_TABLE);
      const params: unknown[] = [];
      for (let i = start; i < end; i++) for (const value of rows[i]!) params.push(value);
      tables.push({ from: fromOf(end - start), params });
    }
    return tables;
  };
}
