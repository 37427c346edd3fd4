import { invalidParam } from '../../protocol/errorDetails';

/**
 * The limits every request is held to, whatever binding carried it: checked
 * on the decoded request (the SDK's message objects, as JSON-RPC, HTTP+JSON,
 * the v0.3 layer and gRPC all hand it to the one request handler), before
 * anything is stored (`requestGate.ts`). A refusal is invalid params naming
 * the field and the limit: JSON-RPC -32602, HTTP 400, gRPC INVALID_ARGUMENT.
 *
 * The wire's own bound comes first and stays the binding's: a body over
 * `a2a.maxBodyBytes` is 413 before it is read in full, a gRPC message over it
 * RESOURCE_EXHAUSTED. These limits are about the shape of what was decoded:
 * a protobuf message decodes to more JSON than its bytes, and a body well
 * under the size limit can still nest a value a thousand levels deep (which
 * no protobuf encoder can write back: every later read of it would fail).
 */

/** What a request may hold. */
export interface RequestLimits {
  /** `a2a.maxBodyBytes`: the decoded request as JSON (default values left out, as ProtoJSON leaves them). */
  readonly maxBytes: number;
  /** How deep any value nests, the request's params as level 1 (protobuf's default recursion limit). */
  readonly maxDepth: number;
  /** Keys in one object (a metadata or data object: a request's own messages have few). */
  readonly maxFields: number;
  /** Items in one array (parts, a data part's list, a metadata list). */
  readonly maxItems: number;
  /** Characters in one string or key, except a part's content (text, url, raw, data: bounded by `maxBytes`). */
  readonly maxStringChars: number;
  /** All of a request's `metadata` objects together, as JSON. */
  readonly maxMetadataBytes: number;
}

/** The node's limits but the size, which is `a2a.maxBodyBytes`. */
export const REQUEST_LIMITS: Omit<RequestLimits, 'maxBytes'> = Object.freeze({
  maxDepth: 100,
  maxFields: 1_000,
  maxItems: 10_000,
  maxStringChars: 4_096,
  maxMetadataBytes: 16 * 1024,
});

/** A field of a request that breaks a limit: where, and which limit. */
export interface LimitViolation {
  /** The field, as its JSON path from the request's params (`message.metadata.tags`). */
  field: string;
  /** What is wrong, naming the limit. */
  description: string;
}

/**
 * The first field of `params` (a decoded request) that breaks `limits`, or
 * undefined. The walk descends at most `maxDepth` levels (it refuses deeper
 * values, so its own recursion is bounded) and names the field as the JSON
 * bindings spell it: a oneof's `{ $case, value }` is its case's name
 * (`message.parts[0].text`, not `…content.value`).
 */
export function limitViolation(params: unknown, limits: RequestLimits): LimitViolation | undefined {
  const walk = new LimitWalk(limits);
  const broken = walk.visit(params, 1, MESSAGE);
  if (!broken) return undefined;
  return { field: pathText(broken.path.reverse()), description: broken.description };
}

/** {@link limitViolation} as the refusal every binding answers (invalid params naming the field), or undefined. */
export function limitRefusal(params: unknown, limits: RequestLimits): Error | undefined {
  const violation = limitViolation(params, limits);
  return violation && invalidParam(violation.field, violation.description);
}

/** Where a value sits: in one of the SDK's message objects, in caller JSON (a Struct), in a part's content. */
const MESSAGE = 0;
const JSON_VALUE = 1;
const CONTENT = 2;

/** The oneof cases of a part's content: their strings are bounded by the size alone. */
const CONTENT_CASES: ReadonlySet<string> = new Set(['text', 'raw', 'url', 'data']);

/** A broken limit found deep in the walk; each level it returns through adds its own segment. */
interface Broken {
  path: Array<string | number>;
  description: string;
  /** A depth violation is named at the JSON value the caller set (`message.metadata`), not 100 levels into it. */
  depth: boolean;
}

const count = (n: number) => n.toLocaleString('en-US');

class LimitWalk {
  /** The request's size as JSON so far. */
  private bytes = 0;
  /** Its metadata's size as JSON so far. */
  private metadataBytes = 0;

  constructor(private readonly limits: RequestLimits) {}

  visit(value: unknown, depth: number, where: number): Broken | undefined {
    switch (typeof value) {
      case 'string':
        return this.text(value, where);
      case 'number':
      case 'bigint':
        // A default value (0) is not written in ProtoJSON; caller JSON writes it.
        if (where !== MESSAGE || value) this.bytes += String(value).length;
        return this.over();
      case 'boolean':
        if (where !== MESSAGE || value) this.bytes += value ? 4 : 5;
        return this.over();
      case 'object':
        if (value === null) {
          this.bytes += 4;
          return undefined;
        }
        if (depth > this.limits.maxDepth) return broken(`nests deeper than ${this.limits.maxDepth} levels`, true);
        if (ArrayBuffer.isView(value)) {
          // Raw bytes travel as base64 in JSON.
          this.bytes += Math.ceil(value.byteLength / 3) * 4 + 2;
          return this.over();
        }
        return Array.isArray(value) ? this.list(value, depth, where) : this.object(value, depth, where);
      default:
        return undefined;
    }
  }

  private text(value: string, where: number): Broken | undefined {
    if (value.length > this.limits.maxStringChars && where !== CONTENT)
      return broken(`is ${count(value.length)} characters long; the limit is ${count(this.limits.maxStringChars)}`);
    if (where !== MESSAGE || value.length > 0) this.bytes += value.length + 2;
    return this.over();
  }

  private list(items: unknown[], depth: number, where: number): Broken | undefined {
    if (items.length > this.limits.maxItems)
      return broken(`has ${count(items.length)} items; the limit is ${count(this.limits.maxItems)}`);
    if (where !== MESSAGE || items.length > 0) this.bytes += items.length + 1;
    for (let index = 0; index < items.length; index++) {
      const inner = this.visit(items[index], depth + 1, where);
      if (inner) return within(inner, index);
    }
    return undefined;
  }

  private object(value: object, depth: number, where: number): Broken | undefined {
    const { maxFields, maxStringChars, maxMetadataBytes } = this.limits;
    const before = this.bytes;
    let fields = 0;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      if (++fields > maxFields)
        return broken(`has more than ${count(maxFields)} fields; the limit is ${count(maxFields)}`);
      if (key.length > maxStringChars)
        return broken(`has a key of ${count(key.length)} characters; the limit is ${count(maxStringChars)}`);
      let child = (value as Record<string, unknown>)[key];
      let name = key;
      let inside = where;
      if (where === MESSAGE) {
        if (child === undefined) continue;
        if (key === 'metadata') inside = JSON_VALUE;
        else if (isOneof(child)) {
          // A oneof is spelled in JSON as its case: `{ content: { $case: 'text', value } }` is `{ text }`.
          name = child.$case;
          inside = CONTENT_CASES.has(name) ? CONTENT : MESSAGE;
          child = child.value;
        }
      }
      const start = this.bytes;
      const inner = this.visit(child, depth + 1, inside);
      if (inner) {
        // A depth violation is named at the JSON value the caller set, not at the level where it ran out.
        if (inner.depth && inside !== where) inner.path.length = 0;
        return within(inner, name);
      }
      // Only a field that is written counts its key (ProtoJSON leaves out default values).
      if (this.bytes > start) this.bytes += name.length + 4;
      if (where === MESSAGE && key === 'metadata') {
        this.metadataBytes += this.bytes - start;
        if (this.metadataBytes > maxMetadataBytes)
          return within(
            broken(
              `brings the request's metadata to ${count(this.metadataBytes)} bytes as JSON; the limit is ${count(maxMetadataBytes)} for all of it`,
            ),
            name,
          );
      }
      const over = this.over();
      if (over) return within(over, name);
    }
    if (where !== MESSAGE || this.bytes > before) this.bytes += 2;
    return undefined;
  }

  /** The size limit, once the request grew past it. */
  private over(): Broken | undefined {
    const { maxBytes } = this.limits;
    return this.bytes > maxBytes
      ? broken(`takes the request past ${count(maxBytes)} bytes as JSON (a2a.maxBodyBytes)`)
      : undefined;
  }
}

function broken(description: string, depth = false): Broken {
  return { path: [], description, depth };
}

/** `inner` found under `segment`: the segment joins its path (which is built leaf first). */
function within(inner: Broken, segment: string | number): Broken {
  inner.path.push(segment);
  return inner;
}

function isOneof(value: unknown): value is { $case: string; value: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { $case?: unknown }).$case === 'string';
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** How long a key may be in a field's name (a caller's key can be long; the refusal need not repeat it). */
const SHOWN_KEY = 64;

/** A path as the JSON bindings name a field: `message.parts[0].text`, odd keys quoted. */
function pathText(path: ReadonlyArray<string | number>): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) text += text === '' ? segment : `.${segment}`;
    else {
      const shown = segment.length > SHOWN_KEY ? `${segment.slice(0, SHOWN_KEY)}…` : segment;
      text += `[${JSON.stringify(shown)}]`;
    }
  }
  return text;
}
