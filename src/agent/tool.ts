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
  /**
   * The specialist this tool lands with, by name; when unset its name prefix
   * decides (`exec_…` → operator). A tool family's `agent` fills it in for the
   * family's tools.
   */
  readonly agent?: string;
  execute(args: z.infer<P>, ctx: ToolContext): Promise<unknown>;
}

/** Any tool, whatever its parameter schema. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any>;

const TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

/**
 * Declares a tool: a frozen plain object. `agent` names the specialist it
 * lands with; without it the name's prefix routes it.
 * @example
 * const echo = defineTool({
 *   name: 'echo',
 *   agent: 'operator',
 *   description: 'Echoes its text.',
 *   parameters: z.object({ text: z.string() }),
 *   execute: async ({ text }) => text,
 * });
 */
export function defineTool<P extends z.ZodObject>(definition: {
  name: string;
  description: string;
  parameters: P;
  agent?: string;
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

/** One argument of a tool as a person reads it: `data (string)`, `algorithm (optional: sha256 | sha512)`. */
export interface ToolField {
  name: string;
  required: boolean;
  /** The JSON Schema type or the allowed values, in words. */
  type: string;
  description?: string;
}

/** The arguments a tool takes, from its JSON Schema, in declaration order. */
export function toolFields(tool: AnyTool): ToolField[] {
  const schema = toolJsonSchema(tool);
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    required: required.has(name),
    type: schemaTypeText(property),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
  }));
}

/** `data (string), algorithm (optional, sha256 | sha512)`: the fields of a tool on one line. */
export function describeToolFields(tool: AnyTool): string {
  const fields = toolFields(tool);
  if (!fields.length) return 'no arguments';
  return fields.map((f) => `${f.name} (${f.required ? '' : 'optional, '}${f.type})`).join(', ');
}

function schemaTypeText(property: Record<string, unknown>): string {
  if (Array.isArray(property.enum)) return property.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (Array.isArray(property.anyOf))
    return (property.anyOf as Record<string, unknown>[]).map(schemaTypeText).join(' or ');
  if (property.type === 'array' && property.items && typeof property.items === 'object')
    return `array of ${schemaTypeText(property.items as Record<string, unknown>)}`;
  if (Array.isArray(property.type)) return property.type.join(' or ');
  return typeof property.type === 'string' ? property.type : 'any';
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
