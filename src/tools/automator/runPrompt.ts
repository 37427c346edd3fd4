import { runToEnd, type TurnResult, type TurnRunner } from '../../agent/turn';
import { errorMessage } from '../../errors';
import type { Principal } from '../../principal';

/** Longest result text kept in the database; longer answers are cut with a marker. */
export const MAX_STORED_RESULT = 16_000;

/** What the automator runs: one prompt through the agent tree, as the principal that created the job. */
export interface PromptRun {
  principal: Principal;
  sessionId: string;
  text: string;
  signal: AbortSignal;
  /** The agent the turn starts at (a workflow step's `agent`); the root when absent. */
  startAgent?: string;
  /** Passed to the runner as TurnInput metadata. */
  metadata?: Record<string, unknown>;
}

/** How an automated prompt ended, in the automator's own words. */
export type PromptOutcome =
  | { status: Exclude<TurnResult['status'], 'auth-required'>; text: string; author: string }
  | { status: 'cancelled'; text: string; author: null };

/**
 * Runs one prompt to its end through the runner and never throws for a
 * failed or cancelled turn: cron, background and workflow records always get
 * an outcome.
 */
export async function runPrompt(runner: TurnRunner, run: PromptRun): Promise<PromptOutcome> {
  if (run.signal.aborted) return cancelled(run.signal);
  try {
    const result = await runToEnd(runner, {
      principal: run.principal,
      sessionId: run.sessionId,
      text: run.text,
      signal: run.signal,
      startAgent: run.startAgent,
      metadata: run.metadata,
    });
    if (run.signal.aborted) return cancelled(run.signal);
    // A remote agent's call for authorization waits for the user as a question does.
    const status = result.status === 'auth-required' ? 'input-required' : result.status;
    return { status, text: clip(result.text), author: result.author };
  } catch (error) {
    if (run.signal.aborted) return cancelled(run.signal);
    return { status: 'failed', text: clip(errorMessage(error)), author: 'automator' };
  }
}

function cancelled(signal: AbortSignal): PromptOutcome {
  // A deadline's reason is a DOMException ("timed out after 10m"), which need not be an Error of this realm.
  const given = signal.reason instanceof Error || signal.reason instanceof DOMException;
  const reason = given ? (signal.reason as Error).message : typeof signal.reason === 'string' ? signal.reason : '';
  return { status: 'cancelled', text: reason || 'cancelled', author: null };
}

/** Cuts `text` to what the database keeps. */
export function clip(text: string): string {
  return text.length <= MAX_STORED_RESULT ? text : `${text.slice(0, MAX_STORED_RESULT)}… [cut]`;
}
