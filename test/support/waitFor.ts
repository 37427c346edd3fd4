/**
 * Polls `check` every 20 ms until it returns a truthy value, which it
 * resolves with, or until `timeoutMs` passes, when it fails naming `what`.
 * For conditions no promise announces (a row written by a background job, a
 * process that exits); where the code under test returns a promise, await
 * that instead. The limit only bounds a failing test: it is generous (20 s
 * unless a caller needs longer), never a claim about speed, which is the
 * bench's (scripts/bench).
 * @example
 * await waitFor(async () => (await status(id)) === 'completed', 10_000, 'the job to complete');
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 20_000,
  what = 'the condition',
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Checks that `check` stays truthy for `ms`, polled every 20 ms, failing at
 * the first falsy value with `what`. The weakest way to claim that something
 * does NOT happen: a window passes on a busy machine whether or not the code
 * had its chance. Prefer waiting for a positive event that must come after
 * the one that should not (a later notification on the same connection, a
 * witness job's run, the connections the thing would arrive on closed).
 * @example
 * await holdsFor(() => peer.requests.length === 0, 400, 'no probe after close');
 */
export async function holdsFor(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (!(await check())) throw new Error(`${what} stopped holding after ${ms - (end - Date.now())}ms`);
    if (Date.now() >= end) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(20, Math.max(0, end - Date.now()))));
  }
}
