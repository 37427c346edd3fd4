import type { Task } from '@a2a-js/sdk';
import { REQUEST_LIMITS } from './requestLimits';

/**
 * Stored tasks as reads answer them, so that nothing one caller stored can
 * break another caller's reads (the owner's list holds every caller's
 * tasks). Requests are held to the limits before anything is stored
 * (`requestGate.ts`); what was stored before them, or by a path that escaped
 * them, is made readable here: a value nested past {@link READ_DEPTH} is
 * answered as `null` (no protobuf encoder can write it: a gRPC answer
 * holding it fails whole), and a ListTasks page stops before
 * {@link LIST_PAGE_BYTES} (a gRPC client takes 4 MiB by default; a page of
 * fifty tasks of 100 KiB each is more), the rest on the next page.
 */

/** How deep a stored task may nest when read: a request's limit, with room for the task around its message. */
export const READ_DEPTH = 2 * REQUEST_LIMITS.maxDepth;
/** The most a ListTasks page carries, as JSON (at least one task, whatever its size). */
export const LIST_PAGE_BYTES = 2 * 1024 * 1024;

/** `task` as a read answers it, and about how many bytes it takes as JSON. Unchanged when nothing nests too deep. */
export function readableTask(task: Task): { task: Task; bytes: number } {
  const bytes = measure(task, 1);
  if (bytes >= 0) return { task, bytes };
  const cut = cutDeep(task, 1) as Task;
  return { task: cut, bytes: measure(cut, 1) };
}

/** The size of `value` as JSON, about (numbers as 8 characters), or -1 when it nests past {@link READ_DEPTH}. */
function measure(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
    case 'bigint':
    case 'boolean':
      return 8;
    case 'object': {
      if (value === null) return 4;
      // The recursion goes no deeper than this: its depth is bounded whatever was stored.
      if (depth > READ_DEPTH) return -1;
      if (ArrayBuffer.isView(value)) return Math.ceil(value.byteLength / 3) * 4 + 2;
      let bytes = 2;
      if (Array.isArray(value)) {
        for (const item of value) {
          const size = measure(item, depth + 1);
          if (size < 0) return -1;
          bytes += size + 1;
        }
        return bytes;
      }
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const size = measure((value as Record<string, unknown>)[key], depth + 1);
        if (size < 0) return -1;
        bytes += size + key.length + 4;
      }
      return bytes;
    }
    default:
      return 0;
  }
}

/** A copy of `value` with every object or array past {@link READ_DEPTH} as `null`. */
function cutDeep(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  if (depth > READ_DEPTH) return null;
  if (Array.isArray(value)) return value.map((item) => cutDeep(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    if (Object.hasOwn(value, key)) copy[key] = cutDeep((value as Record<string, unknown>)[key], depth + 1);
  }
  return copy;
}
