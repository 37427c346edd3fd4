import type { z } from 'zod';

/**
 * Configuration problems as a person fixes them: one line per problem,
 * `key.path: what is wrong`, the bad value echoed (never one under a key that
 * may hold a credential), and for an unknown key (at any level, the top one
 * included) or a value not among the allowed ones, what it most likely meant
 * ("did you mean").
 */
export function formatIssues(error: z.ZodError, schema: z.ZodType): string[] {
  return error.issues.map((issue) => {
    const at = issue.path as (string | number)[];
    const where = keyPath(at);
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeys(schema, at);
      const lines = issue.keys.map((key) => `unknown key "${key}"${hint(key, known)}`);
      return `${where ? where + ': ' : ''}${lines.join('; ')}`;
    }
    const allowed = issue.code === 'invalid_value' ? issue.values.filter((v) => typeof v === 'string') : [];
    const meant = typeof issue.input === 'string' && allowed.length ? hint(issue.input, allowed) : '';
    return `${where || '(top level)'}: ${issue.message}${meant}${echo(at, issue.input)}`;
  });
}

/** `a.b[0].c`: the key path of a problem as the README and error lines write it. */
export function keyPath(at: readonly (string | number | symbol)[]): string {
  return at
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');
}

/** Keys whose values may be credentials: their bad values are never printed. */
const SECRET_KEY = /key|token|secret|password|auth|header/i;

/** ` (got "ftp://x")` for a printable bad value, else nothing. */
function echo(at: readonly (string | number)[], input: unknown): string {
  if (at.some((p) => typeof p === 'string' && SECRET_KEY.test(p))) return '';
  if (!['string', 'number', 'boolean'].includes(typeof input)) return '';
  const text = JSON.stringify(input);
  return ` (got ${text.length > 80 ? `${text.slice(0, 77)}…"` : text})`;
}

/** ` (did you mean "port"?)` when a declared key is a typo away, else nothing. */
function hint(key: string, known: readonly string[]): string {
  const lower = key.toLowerCase();
  const scored = known
    .map((candidate) => ({ candidate, distance: editDistance(lower, candidate.toLowerCase()) }))
    .filter(({ candidate, distance }) => distance <= Math.max(1, Math.floor(candidate.length / 3)))
    .sort((a, b) => a.distance - b.distance);
  return scored.length ? ` (did you mean "${scored[0]!.candidate}"?)` : '';
}

/** The keys the object schema at `at` declares (empty when the path leads to no object). */
function knownKeys(schema: z.ZodType, at: readonly (string | number)[]): string[] {
  let current: z.ZodType[] = [schema];
  for (const step of at) {
    current = current.flatMap((s) => objectsIn(s)).flatMap((s) => childAt(s, step));
  }
  return [...new Set(current.flatMap((s) => objectsIn(s)).flatMap((s) => Object.keys(shapeOf(s))))];
}

type Def = { type: string; innerType?: z.ZodType; in?: z.ZodType; shape?: Record<string, z.ZodType> };
const defOf = (s: z.ZodType): Def & { element?: z.ZodType; options?: z.ZodType[] } =>
  (s as unknown as { _zod: { def: Def & { element?: z.ZodType; options?: z.ZodType[] } } })._zod.def;
const shapeOf = (s: z.ZodType): Record<string, z.ZodType> => defOf(s).shape ?? {};

/** The object schemas `s` stands for, through defaults, optionals, pipes and unions. */
function objectsIn(s: z.ZodType): z.ZodType[] {
  const def = defOf(s);
  if (def.type === 'object' || def.type === 'array' || def.type === 'record') return [s];
  if (def.innerType) return objectsIn(def.innerType);
  if (def.in) return objectsIn(def.in);
  if (def.options) return def.options.flatMap(objectsIn);
  return [];
}

function childAt(s: z.ZodType, step: string | number): z.ZodType[] {
  const def = defOf(s);
  if (def.type === 'array' && typeof step === 'number' && def.element) return objectsIn(def.element);
  if (def.type === 'object' && typeof step === 'string' && shapeOf(s)[step]) return objectsIn(shapeOf(s)[step]!);
  return [];
}

/**
 * Edit distance counting a swap of two neighbours as one edit (optimal
 * string alignment), for "did you mean": `agnet` is one edit from `agent`.
 */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j]!, before[j - 2]! + 1);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length]!;
}
