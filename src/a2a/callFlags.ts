/** Flags the request handler sets on a call's context for the direct send and the executor to read. */

/**
 * Call-context flag: the caller of this blocking `SendMessage` set no webhook and reads only the task's
 * final state. The executor publishes no progress updates for it; a new task runs as an `on-settle`
 * live task, written once when it settles (see ResultOnlySend).
 */
export const RESULT_ONLY_KEY = 'lango.resultOnly';
/** Call-context flag: the message names no context or task; it starts a new conversation. */
export const NEW_CONTEXT_KEY = 'lango.newContext';
