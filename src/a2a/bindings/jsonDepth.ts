/**
 * How deep a request body may nest: protobuf's default recursion limit, which
 * A2A v1.0's ProtoJSON inherits. Deeper bodies are refused where they are
 * parsed (-32602 / HTTP 400) instead of overflowing the stack of whatever
 * walks them later (an internal error, -32603, naming nothing).
 */
export const MAX_JSON_DEPTH = 100;

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
