import { LangoError } from '../errors';

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
