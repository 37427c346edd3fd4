import type { LlmAgent } from '../agent/agent';
import type { ToolRunInput, ToolRunResult } from '../agent/toolRun';
import type { TurnInput, TurnResult } from '../agent/turn';
import type { Callers } from '../identity/callers';
import type { PeerStatus } from '../federation/health';
import { OWNER, OWNER_ID, type Principal } from '../principal';
import type { Stores } from '../store';
import type { TaskRows } from '../store/taskRows';
import type { SignedInSessions } from '../identity/sessions';
import type { AgentGraph } from './graph';
import type { Timelines } from './timeline';

/** What the console reads from the node, when a page asks. */
export interface ConsoleSources {
  /** The node's name as its card shows it. */
  nodeName: () => string;
  /** The agent tree and federation, with each peer's health. */
  graph: () => AgentGraph;
  /** The current agent tree as the owner sees it (its tools, for the tool runner). */
  root: () => LlmAgent;
  /** The card held for a remote agent, undefined for an unknown name. */
  remoteCard: (name: string) => unknown;
  /** Each configured remote agent's health and breaker. */
  peers: () => PeerStatus[];
  /** Probes a remote agent now. */
  probe: (name: string) => Promise<unknown>;
  /** Turns and their changes; undefined when timelines are off. */
  timelines?: Timelines;
  /** The node's stored A2A tasks (either database, every replica's), read as the owner. */
  taskRows: () => TaskRows;
  /** Conversations, memory, knowledge and the cluster's replicas, read for the owner. */
  stores: () => Stores;
  /** The configured callers: whose memory and knowledge may be browsed. */
  callers: () => Callers;
  /** Runs one tool as the owner, through the runner. */
  runTool: (input: ToolRunInput) => Promise<ToolRunResult>;
  /** Runs one turn to its end through the runner (a replay). */
  runTurn: (input: TurnInput) => Promise<TurnResult>;
  /** The node's model: its name, and whether its client can ask for another model (a replay with another). */
  model: () => { name: string; switchable: boolean };
  sessions: SignedInSessions;
  /** Whether credentials are configured (then the console asks for the owner's token). */
  authConfigured: boolean;
  redact: (text: string) => string;
  /** How long a console session lives, for the cookie's Max-Age. */
  sessionTtlMs: number;
  /** Where the compiled script and styles are (`dist/console`). */
  assetsDir: string;
}

/**
 * The principal a console request names by its `caller` (the owner when it
 * names none), or the 400 message saying what was wrong with the name.
 */
export function namedCaller(
  sources: Pick<ConsoleSources, 'callers'>,
  raw: unknown,
): { principal: Principal } | { error: string } {
  const id = typeof raw === 'string' ? raw.trim() : OWNER_ID;
  if (!id || id.length > 200) return { error: 'caller: name a caller (owner, or a caller id)' };
  return { principal: id === OWNER_ID ? OWNER : sources.callers().byId(id) };
}
