/**
 * Polls `check` every 20 ms until it returns a truthy value, which it
 * resolves with, or until `timeoutMs` passes, when it fails naming `what`.
 * For conditions no promise announces (a row written by a background job, a
 * process that exits); where the code under test returns a promise, await
 * that instead.
 * @example
 * await waitFor(async () => (await status(id)) === 'completed', 10_000, 'the job to complete');
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 5000,
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
 * the first falsy value with `what`. For claims that something does NOT
 * happen (no probe after close, no fourth cron run): no event announces an
 * absence, so the test watches a window as long as the claim is about.
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
