import type { AgentExtension } from '@a2a-js/sdk';

/**
 * One account of every hop (issue 33): the shape of the tree a task carries
 * in its metadata under {@link ACCOUNT_METADATA_KEY}, and the one reader of
 * a tree a peer sent. Each hop is one node's turn: the node, the principal
 * it ran as (and who acted for it), its wall time and model tokens, and its
 * steps — agents, the tools they called, the remote agents they called,
 * each remote's own hop nested under the call that reached it when the
 * remote offers this extension (two lango nodes always do). Times are
 * milliseconds from the start of their hop, so a hop's steps lay out as a
 * waterfall without comparing two nodes' clocks. docs/accounting.md
 * describes it for readers of the metadata.
 */

/** The extension's URI, listed in the card's `capabilities.extensions`. */
export const ACCOUNTING_EXTENSION = 'https://lango.dev/a2a/ext/accounting/v1';

/** Where a task's `metadata` (and its closing status update's) carries the account of its latest turn. */
export const ACCOUNT_METADATA_KEY = `${ACCOUNTING_EXTENSION}/account`;

/**
 * Where a task's `metadata` records who acted for whom to reach the node, when
 * its turn ran for a delegated token's subject — kept whether or not
 * accounts are (`observability.accounting`).
 */
export const DELEGATION_METADATA_KEY = `${ACCOUNTING_EXTENSION}/delegation`;

/** A delegated turn's chain as its task records it. */
export interface DelegationRecord {
  /** The principal the turn ran as: the subject of the token. */
  subject: string;
  /** Each hop of the chain in the order it was made: `actor` called on behalf of `for` (the subject through it). */
  hops: { actor: string; for: string }[];
}

/**
 * The record of a principal's chain (`actors`, outermost first), or
 * undefined for a principal that called itself.
 * @example
 * delegationRecord({ id: 'caller-x', actors: ['node-b', 'node-a'] });
 * // { subject: 'caller-x', hops: [{ actor: 'node-a', for: 'caller-x' }, { actor: 'node-b', for: 'node-a' }] }
 */
export function delegationRecord(principal: { id: string; actors?: readonly string[] }): DelegationRecord | undefined {
  if (!principal.actors?.length) return undefined;
  const inOrder = [...principal.actors].reverse();
  return {
    subject: principal.id,
    hops: inOrder.map((actor, i) => ({ actor, for: i === 0 ? principal.id : inOrder[i - 1]! })),
  };
}

/** Model tokens in (prompt) and out (completion). */
export interface TokenCount {
  input: number;
  output: number;
}

/** What every step has: its name and where it sits in its hop's time. */
interface StepTiming {
  name: string;
  /** Milliseconds from the start of the hop to the start of the step. */
  startMs: number;
  wallMs: number;
}

/** An agent's turn at acting: its model calls' tokens and time, and what it called. */
export interface AgentStep extends StepTiming {
  kind: 'agent';
  tokens: TokenCount;
  modelCalls: number;
  /** Time spent waiting for the model. */
  modelMs: number;
  steps: AccountStep[];
}

/** A tool call. */
export interface ToolStep extends StepTiming {
  kind: 'tool';
  ok: boolean;
}

/** A call to a remote agent, with the remote's own hop when it sent one. */
export interface RemoteStep extends StepTiming {
  kind: 'remote';
  /** How the call ended: completed, input-required, auth-required, failed. */
  status: string;
  hop?: HopAccount;
}

/** One step of a hop. */
export type AccountStep = AgentStep | ToolStep | RemoteStep;

/** One node's turn of a task. */
export interface HopAccount {
  /** The node that ran it: its public A2A URL. */
  node: string;
  /** The node's agent card name. */
  name: string;
  /** The principal the turn ran as (the subject of a delegated token). */
  principal: string;
  /** Who acted for that principal to reach the node, outermost first (a delegated token's chain). */
  actors?: string[];
  taskId?: string;
  /** When the turn started, by the node's clock (ISO time). */
  startedAt: string;
  wallMs: number;
  /** Model tokens of this hop's own model calls. */
  tokens: TokenCount;
  /** `tokens` plus the `total` of every hop nested in it: what the whole request cost from here down. */
  total: TokenCount;
  steps: AccountStep[];
  /** Set when a peer's tree went past the bounds it is read with and steps were dropped. */
  truncated?: boolean;
}

/** The card's extension entry. */
export function accountingExtension(): AgentExtension {
  return {
    uri: ACCOUNTING_EXTENSION,
    description:
      'One account of every hop: each task carries the tree of what ran (agents, tools, remote agents with their ' +
      'own trees; wall time, model tokens, node and principal) in its metadata.',
    required: false,
    params: { metadataKey: ACCOUNT_METADATA_KEY, delegationKey: DELEGATION_METADATA_KEY },
  };
}

/** How much of a peer's tree is read. */
export interface AccountBounds {
  /** Most hops nested under one another (the node's `a2a.maxHops`). */
  maxDepth: number;
  /** Most steps in the whole tree, nested hops included. */
  maxSteps: number;
  /** Masks registered secrets in every text kept (a peer echoing a token it was sent). */
  redact?: (text: string) => string;
}

/** The longest text kept of a name, node or principal. */
const MAX_TEXT = 256;

/**
 * A peer's tree as this node keeps it: every field checked, texts redacted and cut to a
 * bounded length, steps past the bounds dropped (the hop marked
 * `truncated`), and every `total` recomputed from the tokens it holds, so
 * the totals add up whatever the peer claimed. Undefined when `value` is
 * not a hop at all.
 * @example
 * const hop = readHopAccount(task.metadata?.[ACCOUNT_METADATA_KEY], { maxDepth: 4, maxSteps: 500 });
 */
export function readHopAccount(value: unknown, bounds: AccountBounds): HopAccount | undefined {
  const redact = bounds.redact ?? ((text: string) => text);
  const budget: Budget = {
    steps: bounds.maxSteps,
    text: (raw) => (typeof raw === 'string' ? redact(raw.slice(0, MAX_TEXT * 4)).slice(0, MAX_TEXT) : undefined),
  };
  return readHop(value, bounds.maxDepth, budget);
}

/** What is left to read of a peer's tree, and how its texts are kept. */
interface Budget {
  steps: number;
  text(value: unknown): string | undefined;
}

function readHop(value: unknown, depth: number, budget: Budget): HopAccount | undefined {
  const text = budget.text;
  if (depth <= 0 || !isRecord(value)) return undefined;
  const node = text(value.node);
  const principal = text(value.principal);
  if (node === undefined || principal === undefined) return undefined;
  const actors = Array.isArray(value.actors) ? value.actors.slice(0, 16).map(text).filter(isDefined) : undefined;
  const steps: AccountStep[] = [];
  const truncated = readSteps(value.steps, steps, depth, budget);
  const hop: HopAccount = {
    node,
    name: text(value.name) ?? '',
    principal,
    ...(actors && actors.length > 0 ? { actors } : {}),
    ...(text(value.taskId) !== undefined ? { taskId: text(value.taskId) } : {}),
    startedAt: text(value.startedAt) ?? '',
    wallMs: count(value.wallMs),
    tokens: tokensOf(value.tokens),
    total: { input: 0, output: 0 },
    steps,
    ...(truncated || value.truncated === true ? { truncated: true } : {}),
  };
  hop.total = totalOf(hop);
  return hop;
}

/** Reads `raw` into `out`; true when something was dropped. */
function readSteps(raw: unknown, out: AccountStep[], depth: number, budget: Budget): boolean {
  if (!Array.isArray(raw)) return raw !== undefined;
  let dropped = false;
  for (const item of raw) {
    if (budget.steps <= 0) return true;
    const step = readStep(item, depth, budget);
    if (step) out.push(step.step);
    dropped ||= !step || step.dropped;
  }
  return dropped;
}

function readStep(value: unknown, depth: number, budget: Budget): { step: AccountStep; dropped: boolean } | undefined {
  if (!isRecord(value)) return undefined;
  const text = budget.text;
  const name = text(value.name);
  if (name === undefined) return undefined;
  budget.steps -= 1;
  const timing = { name, startMs: count(value.startMs), wallMs: count(value.wallMs) };
  switch (value.kind) {
    case 'agent': {
      const steps: AccountStep[] = [];
      const dropped = readSteps(value.steps, steps, depth, budget);
      return {
        step: {
          kind: 'agent',
          ...timing,
          tokens: tokensOf(value.tokens),
          modelCalls: count(value.modelCalls),
          modelMs: count(value.modelMs),
          steps,
        },
        dropped,
      };
    }
    case 'tool':
      return { step: { kind: 'tool', ...timing, ok: value.ok === true }, dropped: false };
    case 'remote': {
      const hop = value.hop === undefined ? undefined : readHop(value.hop, depth - 1, budget);
      const status = text(value.status) ?? 'unknown';
      return {
        step: { kind: 'remote', ...timing, status, ...(hop ? { hop } : {}) },
        dropped: value.hop !== undefined && !hop,
      };
    }
    default:
      return undefined;
  }
}

/**
 * A hop's tokens plus every nested hop's total: the one rule by which a
 * total is made, here and where a node closes its own account.
 */
export function totalOf(hop: Pick<HopAccount, 'tokens' | 'steps'>): TokenCount {
  const total = { ...hop.tokens };
  const add = (steps: readonly AccountStep[]) => {
    for (const step of steps) {
      if (step.kind === 'agent') add(step.steps);
      else if (step.kind === 'remote' && step.hop) {
        total.input += step.hop.total.input;
        total.output += step.hop.total.output;
      }
    }
  };
  add(hop.steps);
  return total;
}

function tokensOf(value: unknown): TokenCount {
  return isRecord(value) ? { input: count(value.input), output: count(value.output) } : { input: 0, output: 0 };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isDefined<T>(value: T | undefined): value is T {
  return value !== undefined;
}
