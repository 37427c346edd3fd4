/**
 * Error classes by who is to blame. Only runtime faults throw past a tool or
 * a turn; everything a user or a peer did wrong becomes one of these with a
 * message that names what was wrong.
 */
export class LangoError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The configuration is invalid: `issues` holds one line per bad key path. */
export class ConfigError extends LangoError {
  constructor(
    message: string,
    readonly issues: string[] = [],
  ) {
    super(message);
  }
}

/** A tool failed while executing; becomes a tool error result for the model. */
export class ToolExecutionError extends LangoError {}

/** A remote A2A agent could not be loaded or called. */
export class RemoteAgentError extends LangoError {}

/** The user's input (CLI argument, request field) is invalid. */
export class InputError extends LangoError {}

/**
 * A cancelled turn: `TurnRunner.run` throws this (its `name` is
 * `AbortError`, like the platform's) so callers can tell cancellation from
 * failure with `err.name === 'AbortError'`.
 */
export class AbortError extends LangoError {
  constructor(message = 'the turn was cancelled') {
    super(message);
  }
}

/**
 * The message of anything thrown, for logs and the short failure notes a
 * model or caller reads. Duck-typed rather than `instanceof Error`: errors
 * from undici or the SDK may come from another realm (a vm context, jest's
 * sandbox) where `instanceof` fails.
 */
export function errorMessage(error: unknown): string {
  if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
    return (error as { message: string }).message;
  }
  return String(error);
}

/** True for any abort, ours or the platform's (`fetch`, `openai`, timers). */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'APIUserAbortError');
}

/** Throws {@link AbortError} when `signal` is aborted. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new AbortError();
}

/**
 * Settles with `promise`, or rejects with {@link AbortError} as soon as
 * `signal` aborts: a tool or peer that ignores its signal cannot hold the
 * turn open after a cancel.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(new AbortError());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new AbortError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
