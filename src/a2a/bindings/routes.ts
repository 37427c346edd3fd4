import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Router } from 'express';
import type { Access } from '../../identity/identity';
import type { Binding } from './inbound';

/**
 * The node's one route table (issue 37 §1): every route it serves is a row —
 * methods, path pattern, binding, name and who may call it — and
 * classification (the request's binding and metric name), credentials and
 * dispatch all read it. A path has one spelling: a request whose path is not
 * exactly a row's (another case, a trailing or doubled slash, a `.` or `..`
 * segment, a percent-encoded letter of a literal segment) matches nothing and
 * is answered 404 before any handler runs. Express may render pages under a
 * row; it never decides which row a request is.
 */

export type { Access };

/** One row of the table, without what answers it. */
export interface RouteSpec {
  readonly methods: readonly string[];
  /**
   * `/`-separated segments: literal text, one `{param}` with literal text around it (`{id}:cancel`), or a last
   * `{*param}` taking one or more segments. Literal text matches exactly, case and all.
   */
  readonly path: string;
  readonly binding: Binding;
  /** The A2A method or a coarse name of the node's own route: a bounded set, for metric labels and span names. */
  readonly name: string;
  readonly access: Access;
}

/** A row with what answers it (a step list, an express app: the table does not care). */
export type Route<H> = RouteSpec & { readonly handler: H };

/** What a request's method and path are in the table. */
export type RouteMatch<H> =
  | { readonly kind: 'route'; readonly route: Route<H>; readonly params: Readonly<Record<string, string>> }
  /** No row has this path (in this spelling). */
  | { readonly kind: 'none' }
  /** Rows have this path, for other methods. */
  | { readonly kind: 'method'; readonly allow: readonly string[] };

type Segment =
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'param'; readonly name: string; readonly prefix: string; readonly suffix: string }
  | { readonly kind: 'rest'; readonly name: string };

interface Compiled<H> {
  readonly route: Route<H>;
  readonly segments: readonly Segment[];
}

const NONE = Object.freeze({ kind: 'none' as const });
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The table: rows are tried in order, all-literal paths first (a literal row wins over a pattern it overlaps).
 * @example
 * const table = new RouteTable([{ methods: ['GET'], path: '/healthz', binding: 'http', name: 'healthz', access: 'public', handler }]);
 * table.match('GET', '/healthz'); // { kind: 'route', route, params: {} }
 * table.match('GET', '/HealthZ'); // { kind: 'none' }
 */
export class RouteTable<H> {
  private readonly literal = new Map<string, Route<H>[]>();
  private readonly patterned: Compiled<H>[] = [];

  constructor(readonly routes: readonly Route<H>[]) {
    for (const route of routes) {
      const segments = compile(route.path);
      if (segments.every((s) => s.kind === 'literal')) {
        const rows = this.literal.get(route.path) ?? [];
        rows.push(route);
        this.literal.set(route.path, rows);
      } else this.patterned.push({ route, segments });
    }
  }

  /** The row `method` and `path` (no query) are, or why none is. */
  match(method: string, path: string): RouteMatch<H> {
    const literal = this.literal.get(path);
    if (literal) return pick(literal, NO_PARAMS, method);
    const raw = canonicalSegments(path);
    if (!raw) return NONE;
    let allow: string[] | undefined;
    for (const { route, segments } of this.patterned) {
      const params = matchSegments(segments, raw);
      if (!params) continue;
      if (route.methods.includes(method)) return { kind: 'route', route, params };
      (allow ??= []).push(...route.methods);
    }
    return allow ? { kind: 'method', allow: [...new Set(allow)] } : NONE;
  }
}

function pick<H>(rows: Route<H>[], params: Readonly<Record<string, string>>, method: string): RouteMatch<H> {
  const route = rows.find((row) => row.methods.includes(method));
  return route
    ? { kind: 'route', route, params }
    : { kind: 'method', allow: [...new Set(rows.flatMap((r) => r.methods))] };
}

/**
 * The raw segments of a path in its one spelling, or undefined: it starts with `/`, and no segment is empty
 * (a doubled or trailing slash), `.` or `..`. Segments stay encoded: literal text is compared as sent.
 */
function canonicalSegments(path: string): string[] | undefined {
  if (path === '/') return [];
  if (path.charCodeAt(0) !== 0x2f) return undefined;
  const segments = path.slice(1).split('/');
  for (const segment of segments) if (segment === '' || segment === '.' || segment === '..') return undefined;
  return segments;
}

function matchSegments(pattern: readonly Segment[], raw: readonly string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const segment = pattern[i]!;
    if (segment.kind === 'rest') {
      if (raw.length <= i) return undefined;
      const rest = raw.slice(i).map(decoded);
      if (rest.some((part) => part === undefined)) return undefined;
      params[segment.name] = rest.join('/');
      return params;
    }
    const text = raw[i];
    if (text === undefined) return undefined;
    if (segment.kind === 'literal') {
      if (text !== segment.text) return undefined;
      continue;
    }
    const { prefix, suffix } = segment;
    if (text.length <= prefix.length + suffix.length || !text.startsWith(prefix) || !text.endsWith(suffix))
      return undefined;
    const value = decoded(text.slice(prefix.length, text.length - suffix.length));
    if (value === undefined) return undefined;
    params[segment.name] = value;
  }
  return raw.length === pattern.length ? params : undefined;
}

/**
 * A parameter's value, percent-decoded; undefined when it does not decode, decodes to a `/` or nothing, or spells
 * an unreserved character (a letter, digit, `-`, `.`, `_`, `~`) encoded: that is another spelling of a path.
 */
function decoded(text: string): string | undefined {
  if (!text.includes('%')) return text;
  if (/%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[Dd]|2[Ee]|5[Ff]|7[Ee])/.test(text)) return undefined;
  try {
    const value = decodeURIComponent(text);
    return value === '' || value.includes('/') ? undefined : value;
  } catch {
    return undefined;
  }
}

/** A pattern's segments. @throws Error for a pattern the table cannot hold (a mistake in the node's own rows). */
function compile(path: string): Segment[] {
  if (path === '/') return [];
  if (!path.startsWith('/')) throw new Error(`route pattern "${path}" must start with /`);
  const parts = path.slice(1).split('/');
  return parts.map((part, index): Segment => {
    const open = part.indexOf('{');
    if (open < 0) return { kind: 'literal', text: part };
    const close = part.indexOf('}', open);
    const name = part.slice(open + 1, close);
    if (close < 0 || part.indexOf('{', close) >= 0) throw new Error(`route pattern "${path}": one {param} per segment`);
    if (name.startsWith('*')) {
      if (index !== parts.length - 1 || part !== `{${name}}`) throw new Error(`route pattern "${path}": {*} ends it`);
      return { kind: 'rest', name: name.slice(1) };
    }
    return { kind: 'param', name, prefix: part.slice(0, open), suffix: part.slice(close + 1) };
  });
}

/**
 * A module's pages (health, discovery, the console, `/metrics`, `/node/*`): its rows of the route table and the
 * express router that renders them under those rows.
 */
export interface Pages {
  readonly routes: readonly RouteSpec[];
  readonly router: Router;
  /**
   * Writes a 401 or 403 of these rows in the pages' own shape (the console's sign-in page); JSON else. Written with
   * Node's own response: the route table refuses before express has seen the request.
   */
  readonly refuse?: (req: IncomingMessage, res: ServerResponse, status: 401 | 403, message: string) => void;
}
