/**
 * Checks of what a node answered before the CLI reads it: any A2A node may
 * answer `--url`, and a node that is not lango (or a hostile one) may send
 * JSON of any shape. A small combinator set rather than the config's zod
 * schemas, so `lango agents --url` loads nothing heavy.
 */

/** Whether `value` has the shape `T`. */
export type Guard<T> = (value: unknown) => value is T;

export const isString: Guard<string> = (value): value is string => typeof value === 'string';
export const isNumber: Guard<number> = (value): value is number => typeof value === 'number' && Number.isFinite(value);
export const isBoolean: Guard<boolean> = (value): value is boolean => typeof value === 'boolean';

/** `T`, or absent. */
export function optional<T>(guard: Guard<T>): Guard<T | undefined> {
  return (value): value is T | undefined => value === undefined || guard(value);
}

/** An array of `T`, at most `max` long. */
export function arrayOf<T>(guard: Guard<T>, max = 10_000): Guard<T[]> {
  return (value): value is T[] => Array.isArray(value) && value.length <= max && value.every((item) => guard(item));
}

/** An object (not an array) whose listed fields pass their guards; other fields are ignored. */
export function shape<T>(fields: { [K in keyof T]-?: Guard<T[K]> }): Guard<T> {
  return (value): value is T =>
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.entries(fields).every(([name, guard]) =>
      (guard as Guard<unknown>)((value as Record<string, unknown>)[name]),
    );
}

/** One of the listed strings. */
export function oneOf<const T extends string>(...choices: T[]): Guard<T> {
  return (value): value is T => typeof value === 'string' && (choices as string[]).includes(value);
}
