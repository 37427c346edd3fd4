import { createHash } from 'node:crypto';
import type { ModelExchange, TaskTimeline } from './timelines';

/** A system prompt at least this long is worth naming by digest once it is seen again. */
export const SHARED_PROMPT_CHARS = 1_000;
/** How often a store rewrites a shared prompt's time of use, and prunes the prompts no turn names. */
export const PROMPT_REFRESH_MS = 60_000;
/**
 * A shared prompt is deleted once unused this long and named by no kept
 * turn. Far longer than {@link PROMPT_REFRESH_MS}: a replica about to write
 * a turn naming a prompt has written that prompt's time within the last
 * minute, so a prune on another replica (clocks a few minutes apart
 * included) never takes it.
 */
export const PROMPT_IDLE_MS = 10 * 60_000;
/** Prompts a store remembers having seen (the agents' instructions, each with and without context). */
const PROMPTS_REMEMBERED = 64;
/** What a turn's exchange reads as when the prompt it names is gone (pruned past its idle time). */
export const PROMPT_GONE = '(this system prompt is no longer stored)';

/** A shared system prompt's row, as both databases hold it (`timeline_prompts`; `used_at` in epoch ms). */
export interface PromptRow {
  digest: string;
  text: string;
  used_at: number;
}

/** An exchange as its row's JSON holds it: a shared prompt is named by digest (`prompt`), not written out. */
type StoredExchange = Omit<ModelExchange, 'instruction'> & { instruction?: string; prompt?: string };

/**
 * The system prompts a store's turns share. An agent's instruction is sent
 * on every model call (the orchestrator's is some 7 KB), so each turn's
 * exchanges held it again: most of the row's bytes, rewritten a few hundred
 * times a second on a busy node. A prompt seen a second time is written
 * once to `timeline_prompts` and the exchanges name it by digest; a prompt
 * that differs every turn (its context appended) stays inline, where it
 * would be written once anyway.
 * @example
 * const shared = new SharedPrompts(() => clock().getTime());
 * const writes = new Map<string, PromptRow>();
 * const row = timelineRow(turn, replica, shared.exchangesJson(turn.exchanges, writes));
 */
export class SharedPrompts {
  /** Prompts seen, by text, oldest first: their digest once seen again, and when their row was last written. */
  private readonly seen = new Map<string, { digest?: string; writtenAt: number }>();
  private prunedAt: number;

  constructor(private readonly now: () => number) {
    this.prunedAt = now();
  }

  /** The exchanges as their row holds them (null when none), adding the prompt rows to write to `writes`. */
  exchangesJson(exchanges: readonly ModelExchange[] | undefined, writes: Map<string, PromptRow>): string | null {
    if (!exchanges?.length) return null;
    return JSON.stringify(exchanges.map((exchange) => this.stored(exchange, writes)));
  }

  /** When it is time to prune: prompts unused since the epoch ms returned, and named by no turn, may go. */
  pruneBefore(): number | undefined {
    const now = this.now();
    if (now - this.prunedAt < PROMPT_REFRESH_MS) return undefined;
    this.prunedAt = now;
    return now - PROMPT_IDLE_MS;
  }

  private stored(exchange: ModelExchange, writes: Map<string, PromptRow>): StoredExchange {
    const text = exchange.instruction;
    if (text.length < SHARED_PROMPT_CHARS) return exchange;
    const known = this.seen.get(text);
    if (!known) {
      this.remember(text, { writtenAt: 0 });
      return exchange;
    }
    // Seen again: the newest now, so a run of prompts seen once does not push it out.
    this.seen.delete(text);
    this.seen.set(text, known);
    const now = this.now();
    known.digest ??= createHash('sha256').update(text).digest('base64url');
    // Written again until a commit holding it is heard of ({@link written}): a failed write leaves no turn naming it.
    if (now - known.writtenAt >= PROMPT_REFRESH_MS)
      writes.set(known.digest, { digest: known.digest, text, used_at: now });
    const { instruction: _named, ...rest } = exchange;
    return { ...rest, prompt: known.digest };
  }

  /** Told once the prompt rows written with a group are committed: each counts as written since its time of use. */
  written(prompts: Iterable<PromptRow>): void {
    for (const prompt of prompts) {
      const known = this.seen.get(prompt.text);
      if (known) known.writtenAt = Math.max(known.writtenAt, prompt.used_at);
    }
  }

  private remember(text: string, entry: { writtenAt: number }): void {
    this.seen.set(text, entry);
    if (this.seen.size > PROMPTS_REMEMBERED) this.seen.delete(this.seen.keys().next().value!);
  }
}

/**
 * The turn read from its row with each exchange's shared prompt written out,
 * the prompts it names read by `read` (a store's select of those digests).
 */
export async function withStoredPrompts(
  turn: TaskTimeline,
  read: (digests: string[]) => Promise<Array<{ digest: string; text: string }>>,
): Promise<TaskTimeline> {
  const digests = new Set<string>();
  for (const exchange of (turn.exchanges ?? []) as StoredExchange[]) if (exchange.prompt) digests.add(exchange.prompt);
  if (digests.size === 0) return turn;
  const texts = new Map((await read([...digests])).map((prompt) => [prompt.digest, prompt.text]));
  const exchanges = (turn.exchanges as StoredExchange[]).map((stored): ModelExchange => {
    if (stored.prompt === undefined) return stored as ModelExchange;
    const { prompt, ...rest } = stored;
    return { ...rest, instruction: texts.get(prompt) ?? PROMPT_GONE } as ModelExchange;
  });
  return { ...turn, exchanges };
}

/**
 * The statement both databases prune shared prompts with: unused since the
 * epoch ms bound to `param` (`?`, `$1`) and named in no kept turn's
 * exchanges (a digest is 43 characters of base64url: it appears in a row's
 * JSON only where named).
 */
export const prunePromptsSql = (
  param: string,
) => `DELETE FROM timeline_prompts WHERE used_at < ${param} AND NOT EXISTS (
  SELECT 1 FROM task_timelines WHERE task_timelines.exchanges LIKE ('%' || timeline_prompts.digest || '%'))`;
