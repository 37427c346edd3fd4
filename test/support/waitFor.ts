/**
 * Polls `check` every 20 ms until it returns a truthy value, which it
 * resolves with, or until `timeoutMs` passes, when it fails naming `what`.
 * For conditions no promise announces (a row written by a background job, a
 * process that exits); where the code under test returns a promise, await
 * that instead. The limit only bounds a failing test: it is generous (20 s
 * unless a caller needs longer), never a claim about speed, which is the
 * bench's (scripts/bench).
 * @example
 * await waitFor(async () => (await status(id)) === 'completed', 20_000, 'the job to complete');
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
