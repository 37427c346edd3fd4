/**
 * How deep a JSON body may nest before the SDK's readers see it: a guard for
 * the parsers, far past the limit every binding is held to (100 levels,
 * `tasks/requestLimits.ts`, which decides on the decoded request and names
 * the field). It only keeps a body like `[[[[…` of 50,000 levels from the
 * readers' recursion (`String()` of a nested array), which would end in an
 * internal error (-32603) naming nothing.
 */
export const MAX_JSON_DEPTH = 1_000;

/**
 * The problem with a parsed JSON value nested deeper than `max` levels
 * (`where`: the name the caller knows it by), or undefined. Walks without
 * recursion, so it is safe on any input.
 */
export function nestingProblem(value: unknown, where: string, max = MAX_JSON_DEPTH): string | undefined {
  // Two parallel stacks of objects rather than a pair per value: this walks every request's params.
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const item = values.pop();
    const depth = depths.pop() as number;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > max) return `${where} nests deeper than ${max} levels`;
    if (Array.isArray(item)) {
      for (const child of item) {
        if (typeof child !== 'object' || child === null) continue;
        values.push(child);
        depths.push(depth + 1);
      }
    } else {
      for (const key in item) {
        const child = (item as Record<string, unknown>)[key];
        if (!Object.hasOwn(item, key) || typeof child !== 'object' || child === null) continue;
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return undefined;
}
