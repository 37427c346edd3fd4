import fs from 'node:fs';
import { haproxyUnavailable } from './cluster';
import { pgvectorUnavailable, postgresUnavailable } from './postgres';
import { tmuxUnavailable } from './tmux';

/**
 * What a test may need from the machine beyond Node. Each is checked in one
 * place (the function named beside it), and a test that lacks one is
 * skipped with its name and the reason, or, where the machine is meant to
 * have it, fails.
 */
export type Prerequisite = 'postgresql' | 'haproxy' | 'pgvector' | 'tmux' | 'bubblewrap';

/** Why each prerequisite is missing here, or undefined when it is not. */
const CHECKS: Record<Prerequisite, () => string | undefined> = {
  postgresql: postgresUnavailable,
  haproxy: haproxyUnavailable,
  pgvector: pgvectorUnavailable,
  tmux: tmuxUnavailable,
  bubblewrap: () =>
    process.env.LANGO_TEST_HIDE_BWRAP
      ? 'bubblewrap hidden by LANGO_TEST_HIDE_BWRAP (this run tests the unconfined fallback)'
      : fs.existsSync('/usr/bin/bwrap')
        ? undefined
        : "no /usr/bin/bwrap (install Debian's bubblewrap, as .ci/apt-packages does)",
};

/**
 * The prerequisites this machine must have (`LANGO_TEST_REQUIRE`, a list
 * separated by spaces or commas): `.ci/run` names what `.ci/apt-packages`
 * installed, and pgvector once `.ci/pgvector` built it. A test needing one
 * of these fails instead of skipping: CI never passes with a test its
 * machine could run left out.
 */
export function requiredPrerequisites(env: NodeJS.ProcessEnv = process.env): Set<string> {
  return new Set((env.LANGO_TEST_REQUIRE ?? '').split(/[\s,]+/).filter(Boolean));
}

/** The first of `needs` this machine lacks, with why; undefined when it has them all. */
export function unmet(needs: readonly Prerequisite[]): { needs: Prerequisite; reason: string } | undefined {
  for (const need of needs) {
    const reason = CHECKS[need]();
    if (reason) return { needs: need, reason };
  }
  return undefined;
}

/**
 * In place of tests that need `needs`: nothing when the machine has them
 * all (returns false: define the tests); else one test named after `what`,
 * skipped with the reason (`(skipped, needs <prerequisite>: <reason>)`,
 * the form `.ci/run` reads), or failing with it when the machine is required
 * to have that prerequisite (returns true: define nothing else).
 * @example
 * if (!skipUnless('the job queue on PostgreSQL', 'postgresql')) describe('job queue', () => { … });
 */
export function skipUnless(what: string, ...needs: Prerequisite[]): boolean {
  const gap = unmet(needs);
  if (!gap) return false;
  standIn(what, gap);
  return true;
}

/**
 * `it` for a test that needs `needs`: the test itself when the machine has
 * them, else its stand-in (skipped, or failing where required; see {@link skipUnless}).
 * @example
 * const itSandboxed = itNeeding('bubblewrap');
 * itSandboxed('asks before running outside the allow-list', async () => { … });
 */
export function itNeeding(
  ...needs: Prerequisite[]
): (name: string, fn: jest.ProvidesCallback, timeout?: number) => void {
  return (name, fn, timeout) => {
    const gap = unmet(needs);
    if (gap) standIn(name, gap);
    else it(name, fn, timeout);
  };
}

/** On a machine without PostgreSQL: the stand-in for `what` (see {@link skipUnless}). */
export function skipWithoutPostgres(what: string): boolean {
  return skipUnless(what, 'postgresql');
}

/** On a machine without PostgreSQL or haproxy: the stand-in for `what` (see {@link skipUnless}). */
export function skipWithoutCluster(what: string): boolean {
  return skipUnless(what, 'postgresql', 'haproxy');
}

function standIn(what: string, gap: { needs: Prerequisite; reason: string }): void {
  if (requiredPrerequisites().has(gap.needs)) {
    it(`${what} (needs ${gap.needs}, which this machine must have)`, () => {
      throw new Error(
        `${gap.needs} is required here (LANGO_TEST_REQUIRE) but missing: ${gap.reason}. ` +
          'A test this machine should run would have been skipped.',
      );
    });
    return;
  }
  it.skip(`${what} (skipped, needs ${gap.needs}: ${gap.reason})`, () => {});
  process.stderr.write(`skipping ${what}: needs ${gap.needs}: ${gap.reason}\n`);
}
