import { randomBytes } from 'node:crypto';

/**
 * A new conversation's contextId: a UUIDv7 (RFC 9562), whose first 48 bits
 * are the time in milliseconds. A contextId is the session's key in SQLite,
 * so time-ordered ids are appended to the session indexes instead of landing
 * on a random page of them, and each group commit writes far fewer pages.
 * @example
 * newContextId(); // '019aa7c2-5d1e-7b3f-9c41-2f6a0e8d1b57'
 */
export function newContextId(now = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70; // version 7
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
