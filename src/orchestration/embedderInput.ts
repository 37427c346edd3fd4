import { z } from 'zod';
import { formatIssues } from '../config/issues';
import { ConfigError } from '../errors';
import type { AnyTool } from '../agent/tool';
import type { SpecRow } from './specs';

/**
 * What an embedder passes to `createApp` beside the configuration — more
 * specialists (`specialists`, rows of the table) and more tools (`tools`) —
 * checked as the configuration is (issue 28): every problem at once, one
 * line per field path (`specialists[0].instruction: …`), "did you mean" for a
 * misspelt field. From JavaScript nothing else checks their shape, and a
 * malformed row would otherwise fail deep inside with "Cannot read
 * properties of undefined".
 */

const AGENT_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
const TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
const words = z.array(z.string());

const InstructionParts = z
  .object({
    role: z.string().min(1),
    whatYouDo: words,
    input: z.string(),
    output: z.string(),
    constraints: words,
    handles: z.string().min(1),
    extra: z.string().optional(),
  })
  .strict();

/** One specialist row (`SpecRow`) as data. */
const SpecRowShape = z
  .object({
    name: z.string().regex(AGENT_NAME, 'letters, digits, _ and -, starting with a letter'),
    description: z.string().min(1),
    prefixes: z.record(z.string().min(1), z.string().min(1)),
    matchPriority: z.number(),
    keywords: words,
    accepts: z.string(),
    returns: z.string(),
    cannotDo: words,
    alwaysInclude: z.boolean(),
    selectHint: z.string().optional(),
    instruction: InstructionParts,
  })
  .strict();

/** A zod object schema, from this copy of zod or the embedder's own. */
const isObjectSchema = (value: unknown): boolean =>
  (value as { _zod?: { def?: { type?: unknown } } } | null)?._zod?.def?.type === 'object';

/** One tool (`defineTool`'s result) as data. */
const ToolShape = z
  .object({
    name: z.string().regex(TOOL_NAME, 'letters, digits, _ and -, at most 64'),
    description: z.string().min(1),
    parameters: z.custom(isObjectSchema, 'expected a zod object schema, z.object({ … })'),
    agent: z.string().optional(),
    execute: z.custom((value) => typeof value === 'function', 'expected a function (args, ctx) => Promise<unknown>'),
  })
  .strict();

const EmbedderInput = z
  .object({ specialists: z.array(SpecRowShape).optional(), tools: z.array(ToolShape).optional() })
  .passthrough();

/**
 * Checks `createApp`'s `specialists` and `tools` against each other and the
 * node's own specialists (`known`): shapes, a specialist named like an
 * existing one, a tool named twice or naming no specialist.
 * @throws ConfigError with one line per problem.
 * @example
 * checkEmbedderInput({ specialists: deps.specialists, tools: deps.tools }, specRows.map((row) => row.name));
 */
export function checkEmbedderInput(
  input: { specialists?: readonly SpecRow[]; tools?: readonly AnyTool[] },
  known: readonly string[],
): void {
  const parsed = EmbedderInput.safeParse(input, { reportInput: true });
  const problems = parsed.success ? [] : formatIssues(parsed.error, EmbedderInput);
  const rows = Array.isArray(input.specialists) ? (input.specialists as unknown[]) : [];
  const names = [...known];
  rows.forEach((row, i) => {
    const name = (row as { name?: unknown } | null)?.name;
    if (typeof name !== 'string') return;
    if (names.includes(name)) problems.push(`specialists[${i}].name: "${name}" is already a specialist of this node`);
    names.push(name);
  });
  const tools = Array.isArray(input.tools) ? (input.tools as unknown[]) : [];
  const toolNames = new Map<string, number>();
  tools.forEach((tool, i) => {
    const { name, agent } = (tool ?? {}) as { name?: unknown; agent?: unknown };
    if (typeof name === 'string') {
      const first = toolNames.get(name);
      if (first !== undefined) problems.push(`tools[${i}].name: "${name}" is already the name of tools[${first}]`);
      else toolNames.set(name, i);
    }
    if (typeof agent === 'string' && !names.includes(agent))
      problems.push(`tools[${i}].agent: "${agent}" is not a specialist of this node (${names.join(', ')})`);
  });
  if (problems.length) {
    // The lines are in the message too: an embedder's uncaught error shows them without reading `issues`.
    const count = `${problems.length} problem${problems.length === 1 ? '' : 's'}`;
    throw new ConfigError(`invalid createApp input (${count}):\n  ${problems.join('\n  ')}`, problems);
  }
}
