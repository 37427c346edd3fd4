import { randomUUID } from 'node:crypto';

/**
 * v0.3 results tag every object with `kind` (`task`, `message`,
 * `status-update`, `artifact-update`; parts `text`, `file`, `data`), and
 * the SDK's v0.3 reader refuses an object without one. Some peers leave it
 * out. When the shape says what the object is — a task has `id` and
 * `status` but no `taskId`, a status update `taskId` and `status` but no
 * `id`, and so on — the kind is filled in; an ambiguous object is left
 * alone, and the SDK refuses it as before.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => Boolean(v) && typeof v === 'object' && !Array.isArray(v);
const has = (o: Json, key: string) => o[key] !== undefined && o[key] !== null;

/** The kind a v0.3 result object's fields imply, or undefined when they do not say unambiguously. */
export function inferResultKind(o: Json): string | undefined {
  const status = isObject(o.status);
  if (status && has(o, 'id') && !has(o, 'taskId')) return 'task';
  if (status && has(o, 'taskId') && !has(o, 'id') && !has(o, 'artifact')) return 'status-update';
  if (isObject(o.artifact) && has(o, 'taskId') && !status) return 'artifact-update';
  if (has(o, 'messageId') && Array.isArray(o.parts) && has(o, 'role') && !status) return 'message';
  return undefined;
}

function inferPartKind(p: Json): string | undefined {
  const text = typeof p.text === 'string';
  const file = isObject(p.file);
  const data = isObject(p.data);
  if (Number(text) + Number(file) + Number(data) !== 1) return undefined;
  return text ? 'text' : file ? 'file' : 'data';
}

/** Fills a missing `kind` on `o` with `kind`; true when it changed something. */
function fill(o: Json, kind: string | undefined): boolean {
  if (o.kind !== undefined || !kind) return false;
  o.kind = kind;
  return true;
}

function completeParts(parts: unknown): boolean {
  let changed = false;
  if (Array.isArray(parts)) for (const p of parts) if (isObject(p)) changed = fill(p, inferPartKind(p)) || changed;
  return changed;
}

function completeMessage(m: unknown): boolean {
  if (!isObject(m)) return false;
  return [fill(m, inferResultKind(m)), completeParts(m.parts)].some(Boolean);
}

function completeResult(r: Json): boolean {
  let changed = fill(r, inferResultKind(r));
  const status = isObject(r.status) ? r.status : undefined;
  switch (r.kind) {
    case 'message':
      return completeParts(r.parts) || changed;
    case 'task':
      changed = completeMessage(status?.message) || changed;
      for (const m of Array.isArray(r.history) ? r.history : []) changed = completeMessage(m) || changed;
      for (const a of Array.isArray(r.artifacts) ? r.artifacts : [])
        if (isObject(a)) changed = completeParts(a.parts) || changed;
      return changed;
    case 'status-update':
      return completeMessage(status?.message) || changed;
    case 'artifact-update':
      return (isObject(r.artifact) && completeParts(r.artifact.parts)) || changed;
    default:
      return changed;
  }
}

/**
 * Completes the kinds of a v0.3 JSON-RPC response's `result` in place.
 * @example
 * const body = { jsonrpc: '2.0', id: 1, result: { id: 't1', contextId: 'c1', status: { state: 'completed' } } };
 * completeLegacyKinds(body); // true; body.result.kind === 'task'
 */
export function completeLegacyKinds(body: unknown): boolean {
  if (!isObject(body) || !isObject(body.result)) return false;
  return completeResult(body.result);
}

/**
 * Some v0.3 servers put a plain string where a task's status carries a
 * message (`"status": {"state": "failed", "message": "quota exceeded"}`),
 * which the SDK's reader refuses. A string there can only be the agent's
 * text, so it is wrapped in an agent message (in place); true when it was.
 * @example
 * const body = { jsonrpc: '2.0', id: 1, result: { kind: 'task', id: 't1', status: { state: 'failed', message: 'no' } } };
 * wrapStringStatusMessage(body); // true; body.result.status.message.parts[0].text === 'no'
 */
export function wrapStringStatusMessage(body: unknown): boolean {
  if (!isObject(body) || !isObject(body.result)) return false;
  const result = body.result;
  const status = result.status;
  if (!isObject(status) || typeof status.message !== 'string') return false;
  const taskId = result.taskId ?? result.id;
  status.message = {
    kind: 'message',
    role: 'agent',
    messageId: randomUUID(),
    parts: [{ kind: 'text', text: status.message }],
    ...(typeof taskId === 'string' ? { taskId } : {}),
    ...(typeof result.contextId === 'string' ? { contextId: result.contextId } : {}),
  };
  return true;
}

/** A message-shaped object (role and parts) without the messageId v0.3 requires. */
function fillMessageId(m: unknown): boolean {
  if (!isObject(m) || has(m, 'messageId') || !has(m, 'role') || !Array.isArray(m.parts)) return false;
  m.messageId = randomUUID();
  return true;
}

/**
 * Gives a made-up `messageId` to the messages of a v0.3 result that lack
 * one (servers built on pre-0.2 data models leave it out), in place; true
 * when it did. The id only de-duplicates: nothing the peer said is lost.
 * @example
 * const body = { jsonrpc: '2.0', id: 1, result: { kind: 'message', role: 'agent', parts: [] } };
 * fillMissingMessageIds(body); // true
 */
export function fillMissingMessageIds(body: unknown): boolean {
  if (!isObject(body) || !isObject(body.result)) return false;
  const result = body.result;
  let changed = false;
  if (!isObject(result.status) && !isObject(result.artifact)) changed = fillMessageId(result) || changed;
  if (isObject(result.status)) changed = fillMessageId(result.status.message) || changed;
  for (const m of Array.isArray(result.history) ? result.history : []) changed = fillMessageId(m) || changed;
  return changed;
}
