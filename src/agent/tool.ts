import { z } from 'zod';
import type { Logger } from '../log/logger';
import { LangoError } from '../errors';
import type { Principal } from '../principal';

/**
 * What a tool receives besides its arguments. Never sent to the model.
 */
export interface ToolContext {
  /** Aborted when the turn is cancelled (A2A CancelTask, CLI Ctrl-C, shutdown). */
  signal: AbortSignal;
  logger: Logger;
  /** Whom the turn runs for: a tool's store calls read and write this principal's rows. */
  principal: Principal;
  /** The conversation this call belongs to (A2A contextId, `cron:<name>`, …), within the principal's. */
  sessionId: string;
  /** The agent that called the tool. */
  agentName: string;
  /**
   * True when this exact call was held for the user's approval
   * ({@link ApprovalRequired}) and the user said yes.
   */
  approved: boolean;
}

/**
 * A tool the model can call. Declared once with {@link defineTool}; the
 * runtime parses the model's arguments with `parameters` before `execute`.
 */
export interface Tool<P extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly description: string;
  readonly parameters: P;
  execute(args: z.infer<P>, ctx: ToolContext): Promise<unknown>;
}

/** Any tool, whatever its parameter schema. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any>;

const TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

/**
 * Declares a tool: a frozen plain object.
 * @example
 * const echo = defineTool({
 *   name: 'exec_echo',
 *   description: 'Echoes its text.',
 *   parameters: z.object({ text: z.string() }),
 *   execute: async ({ text }) => text,
 * });
 */
export function defineTool<P extends z.ZodObject>(definition: {
  name: string;
  description: string;
  parameters: P;
  execute: (args: z.infer<P>, ctx: ToolContext) => Promise<unknown>;
}): Tool<P> {
  if (!TOOL_NAME.test(definition.name)) {
    throw new LangoError(`invalid tool name "${definition.name}": letters, digits, _ and - only, at most 64`);
  }
  return Object.freeze({ ...definition });
}

/** Converted schemas, by tool: a tool is frozen, so its schema never changes, and converting is not cheap. */
const jsonSchemas = new WeakMap<AnyTool, Record<string, unknown>>();

/** The JSON Schema sent to the model for a tool's parameters (converted once per tool; do not mutate it). */
export function toolJsonSchema(tool: AnyTool): Record<string, unknown> {
  let schema = jsonSchemas.get(tool);
  if (!schema) {
    schema = z.toJSONSchema(tool.parameters, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
    delete schema.$schema;
    jsonSchemas.set(tool, schema);
  }
  return schema;
}

/**
 * Thrown by a tool that must not go on without the user's consent (an exec
 * command outside the allow-list, a large payment). The runtime ends the turn
 * in `input-required` with `question`; when the user answers yes, the same
 * call runs again with `ctx.approved` set.
 */
export class ApprovalRequired extends LangoError {
  constructor(readonly question: string) {
    super(question);
  }
}
