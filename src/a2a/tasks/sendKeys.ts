import { hash } from 'node:crypto';
import type { Message } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { SendKey } from '../../store/taskRows';
import { serviceParameter } from '../../protocol/generationExtension';
import { scopeOf } from './taskStore';

/**
 * Sends that never run twice (issue 27): a send is known by its caller and
 * its key — the `Idempotency-Key` header when the caller sets one, else the
 * message itself: its id with what it says and where it goes (the spec's
 * "agents may utilize the messageId to detect duplicate messages"; a
 * message that reuses an id for other parts or another task is not a
 * duplicate, and runs as it always did). The first send with a key runs its
 * turn; a retry with it, on any replica within the window, gets the task
 * the first one created (`TaskRows.claimSend` records the key with the
 * task's claim).
 */

/** The header a caller may name its send with instead of its message id (lower case, as Node hands it over). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** The longest `Idempotency-Key` taken (a UUID is 36; the IETF draft's examples are shorter). */
const MAX_KEY_LENGTH = 255;

/**
 * The key of the send of `message` by the caller of `context`, kept
 * `keptMs` (`a2a.idempotencyWindow`).
 * @example
 * const send = sendKeyOf(params.message, context, 86_400_000);
 */
export function sendKeyOf(message: Message, context: ServerCallContext, keptMs: number): SendKey {
  const header = serviceParameter(context, IDEMPOTENCY_KEY_HEADER);
  if (header !== undefined && (header.length > MAX_KEY_LENGTH || header.trim() === ''))
    throw new RequestMalformedError(`Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters`);
  return { scope: scopeOf(context), key: header !== undefined ? `idempotency:${header}` : messageKey(message), keptMs };
}

/** A message's key: its id, and a digest of its parts and the task and context it names. */
function messageKey(message: Message): string {
  const digest = hash('sha256', JSON.stringify([message.taskId, message.contextId, message.parts]), 'base64url');
  return `message:${message.messageId}:${digest}`;
}
