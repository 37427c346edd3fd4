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
export type BoundColumn = [string, 'text' | 'integer' | 'bigint' | 'boolean'];

/** A table of bound rows, as one statement's `FROM` source and its parameters. */
export interface BoundRows {
  from: string;
  params: unknown[];
}

/**
 * Most rows one statement binds as a table. A table of n rows is one
 * statement text per n, which each database parses once and keeps (SQLite's
 * statement cache, PostgreSQL's named statements on each connection): this
 * keeps the texts few. A larger batch is several statements.
 */
export const ROWS_PER_TABLE = 64;

/** `rows` in runs of at most {@link ROWS_PER_TABLE}: a statement each. */
export function chunksOf<T>(rows: readonly T[]): T[][] {
  const runs: T[][] = [];
  for (let start = 0; start < rows.length; start += ROWS_PER_TABLE)
    runs.push(rows.slice(start, start + ROWS_PER_TABLE));
  return runs;
}

/** Rows bound as tables a group's statements read from: one statement per table, none for no rows. */
export type BoundTables = (rows: readonly unknown[][]) => BoundRows[];

/**
 * `(VALUES (…), …)` of `rows` rows of `types`, each value a parameter: `?`
 * on SQLite; on PostgreSQL `$n` cast to its column's type from `$first`
 * on (`first` undefined: `?` cast, for the `?` seam), since an untyped
 * parameter in a `VALUES` list is taken as text.
 * @example
 * valuesList('postgres', ['text', 'bigint'], 2, 3); // '(VALUES ($3::text, $4::bigint), ($5::text, $6::bigint))'
 */
export function valuesList(dialect: Dialect, types: readonly string[], rows: number, first?: number): string {
  let n = first ?? 0;
  const value =
    dialect === 'sqlite'
      ? () => '?'
      : first === undefined
        ? (type: string) => `CAST(? AS ${type})`
        : (type: string) => `$${n++}::${type}`;
  const list: string[] = [];
  for (let row = 0; row < rows; row++) list.push(`(${types.map(value).join(', ')})`);
  return `(VALUES ${list.join(', ')})`;
}

/**
 * How `dialect` binds rows of `columns` (arrays in that order) as tables:
 * `VALUES` lists of parameters, at most {@link ROWS_PER_TABLE} rows a
 * table, each table's text made once. Every value goes as a parameter of
 * its own: one JSON parameter instead cost SQLite some 15 µs a message row
 * (an extract per column), and text arrays cost PostgreSQL's client an
 * escape of every character of every value.
 */
export function boundTables(dialect: Dialect, columns: readonly BoundColumn[]): BoundTables {
  const names = columns.map(([name], i) => `column${i + 1} AS ${name}`).join(', ');
  const types = columns.map(([, type]) => type);
  /** The text of a table of n rows, at n - 1: the same string each time, so the statement cache finds it at once. */
  const texts: string[] = [];
  const fromOf = (n: number) => (texts[n - 1] ??= `(SELECT ${names} FROM ${valuesList(dialect, types, n)} v)`);
  return (rows) => chunksOf(rows).map((run) => ({ from: fromOf(run.length), params: run.flat() }));
}
