import { randomUUID } from 'node:crypto';

/**
 * A new conversation's contextId: a UUIDv7 (RFC 9562), whose first 48 bits
 * are the time in milliseconds. A contextId is the session's key in SQLite,
 * so time-ordered ids are appended to the session indexes instead of landing
 * on a random page of them, and each group commit writes far fewer pages.
 * The random bits and the variant come from `randomUUID` (a v4 UUID drawn
 * from Node's pooled entropy; `randomBytes` per id was a syscall each).
 * @example
 * newContextId(); // '019aa7c2-5d1e-7b3f-9c41-2f6a0e8d1b57'
 */
export function newContextId(now = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  // randomUUID(): xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx; keep everything after the version digit.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
