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
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop() as [unknown, number];
    if (typeof item !== 'object' || item === null) continue;
    if (depth > max) return `${where} nests deeper than ${max} levels`;
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1]);
  }
  return undefined;
}
