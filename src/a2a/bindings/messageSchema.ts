import { z } from 'zod';
import type { FieldViolation } from '../../protocol/errorDetails';

/**
 * The shape of an inbound message as sent on the wire, checked before the
 * SDK converts it: its ProtoJSON reader coerces (`"text": true` becomes
 * `"true"`, `"messageId": false` becomes `"false"`) and its v0.3 translator
 * throws TypeErrors on wrong part shapes. Checking the raw JSON lets the node
 * refuse such input with -32602 / HTTP 400 naming the field.
 */

const NonEmpty = z.string().min(1, 'must not be empty');
const JsonObject = z.record(z.string(), z.unknown());

/** A v1.0 part: exactly one of text, data (any JSON), url or raw (base64). */
const PartV1 = z
  .looseObject({
    text: z.string().optional(),
    data: z.unknown().optional(),
    url: z.string().optional(),
    raw: z.string().optional(),
    metadata: JsonObject.optional(),
    filename: z.string().optional(),
    mediaType: z.string().optional(),
  })
  .refine((part) => ['text', 'data', 'url', 'raw'].filter((key) => part[key] !== undefined).length === 1, {
    message: 'a part needs exactly one of text, data, url or raw',
  });

/** ProtoJSON readers accept a field's proto name too (`message_id`); look at it under its JSON name. */
const camelKeys = (value: unknown): unknown =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), v]),
      )
    : value;

/** `params` of v1.0 `SendMessage` / `SendStreamingMessage` (JSON-RPC) and the REST `message:send` body. */
export const SendMessageParamsV1 = z.looseObject({
  message: z.preprocess(
    camelKeys,
    z.looseObject({
      messageId: NonEmpty,
      // ProtoJSON enums may be sent by name or by number.
      role: z.union([z.string(), z.number()]),
      parts: z.array(z.preprocess(camelKeys, PartV1)).min(1, 'must contain at least one part'),
      contextId: z.string().optional(),
      taskId: z.string().optional(),
      metadata: JsonObject.optional(),
    }),
  ),
  configuration: JsonObject.optional(),
  metadata: JsonObject.optional(),
});

const FileV03 = z.union([
  z.looseObject({ bytes: z.string(), name: z.string().optional(), mimeType: z.string().optional() }),
  z.looseObject({ uri: z.string(), name: z.string().optional(), mimeType: z.string().optional() }),
]);

/** A v0.3 part, by its `kind`. */
const PartV03 = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('text'), text: z.string() }),
  z.looseObject({ kind: z.literal('file'), file: FileV03 }),
  z.looseObject({ kind: z.literal('data'), data: JsonObject }),
]);

/** `params` of v0.3 `message/send` / `message/stream`. */
export const SendMessageParamsV03 = z.looseObject({
  message: z.looseObject({
    kind: z.literal('message').optional(),
    messageId: NonEmpty,
    role: z.enum(['user', 'agent']),
    parts: z.array(PartV03).min(1, 'must contain at least one part'),
    contextId: z.string().optional(),
    taskId: z.string().optional(),
    metadata: JsonObject.optional(),
  }),
  configuration: JsonObject.optional(),
  metadata: JsonObject.optional(),
});

/** JSON-RPC methods whose params are a message to check (a Map: method names like `toString` must find nothing). */
export const MESSAGE_METHODS: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  ['SendMessage', SendMessageParamsV1],
  ['SendStreamingMessage', SendMessageParamsV1],
  ['message/send', SendMessageParamsV03],
  ['message/stream', SendMessageParamsV03],
]);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const optional = (value: unknown, check: (v: unknown) => boolean) => value === undefined || check(value);
const isString = (value: unknown) => typeof value === 'string';
/** Keys the ProtoJSON readers would rename (`message_id`): such input is left to the schema. */
const hasSnakeKey = (value: Record<string, unknown>) => Object.keys(value).some((key) => key.includes('_'));

function isPlainPartV1(part: unknown): boolean {
  if (!isPlainObject(part) || hasSnakeKey(part)) return false;
  const kinds = (part.text !== undefined ? 1 : 0) + (part.data !== undefined ? 1 : 0);
  return (
    kinds + (part.url !== undefined ? 1 : 0) + (part.raw !== undefined ? 1 : 0) === 1 &&
    optional(part.text, isString) &&
    optional(part.url, isString) &&
    optional(part.raw, isString) &&
    optional(part.metadata, isPlainObject) &&
    optional(part.filename, isString) &&
    optional(part.mediaType, isString)
  );
}

/**
 * True only for v1.0 `SendMessage` params that {@link SendMessageParamsV1}
 * certainly accepts, in the common spelling (camelCase keys); anything else,
 * valid or not, is left to the schema. The schema's parse (its key-renaming
 * copies, the record checks) cost ~4% of a greeting's CPU for the answer
 * "fine"; this check gives the same answer without copying. Narrower than the
 * schema on purpose: it may send valid input to the schema, never pass
 * invalid input (`messageSchema.test.ts` holds the two together).
 */
export function isPlainSendMessageV1(params: unknown): boolean {
  if (!isPlainObject(params)) return false;
  const message = params.message;
  if (!isPlainObject(message) || hasSnakeKey(message)) return false;
  const parts = message.parts;
  return (
    typeof message.messageId === 'string' &&
    message.messageId.length > 0 &&
    (typeof message.role === 'string' || typeof message.role === 'number') &&
    Array.isArray(parts) &&
    parts.length > 0 &&
    parts.every(isPlainPartV1) &&
    optional(message.contextId, isString) &&
    optional(message.taskId, isString) &&
    optional(message.metadata, isPlainObject) &&
    optional(params.configuration, isPlainObject) &&
    optional(params.metadata, isPlainObject)
  );
}

/**
 * The first problem with `value` under `schema`: the field (its path from `value`, `message.parts[0]`) and what is
 * wrong with it, or undefined.
 */
export function messageViolation(schema: z.ZodType, value: unknown): FieldViolation | undefined {
  if (schema === SendMessageParamsV1 && isPlainSendMessageV1(value)) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return undefined;
  const issue = result.error.issues[0];
  const field = issue.path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
  return { field, description: issue.message };
}

/** The first problem with `value` under `schema` as `path: message` (prefixed with `root`), or undefined. */
export function messageProblem(schema: z.ZodType, value: unknown, root: string): string | undefined {
  const violation = messageViolation(schema, value);
  return violation && violationText(violation, root);
}

/** A violation as `path: what is wrong`, its field under `root` (`params` + `message.parts`: `params.message.parts`). */
export function violationText(violation: FieldViolation, root: string): string {
  const { field, description } = violation;
  const path = !root ? field : field === '' || field.startsWith('[') ? `${root}${field}` : `${root}.${field}`;
  return `${path}: ${description}`;
}
