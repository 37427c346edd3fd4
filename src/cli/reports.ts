import type { AgentEntry } from '../a2a/bindings/discovery';
import { PEER_STATES, type PeerStatus } from '../federation/health';
import type { PeerSecurity } from '../federation/peerSecurity';
import type { AgentGraph, GraphAgent } from '../observe/graph';
import type { AgentsReport, AgentView, DoctorReport, ToolsReport, ToolView } from '../observe/nodeInfo';
import type { FamilyStatus } from '../toolset/toolset';
import { arrayOf, isBoolean, isNumber, isString, oneOf, optional, shape, type Guard } from './shapes';

/**
 * What a lango node's report routes (`/node/agents`, `/node/tools`,
 * `/node/doctor`) and catalog (`/agents`) answer, checked field by field
 * before the CLI prints them: a node that answers 200 with another shape is
 * not taken for a lango node.
 */

const strings = arrayOf(isString);

/** How deep an agent tree may nest before the CLI stops believing it. */
const MAX_TREE_DEPTH = 32;

const isFamily: Guard<FamilyStatus> = shape<FamilyStatus>({
  name: isString,
  agent: isString,
  state: oneOf('on', 'off', 'broken'),
  reason: optional(isString),
  optional: optional(isBoolean),
  warning: optional(isString),
  tools: strings,
});

const isSecurity = shape<PeerSecurity>({ requires: isString, satisfied: isBoolean, note: isString });

const isPeer = shape<Pick<PeerStatus, 'name' | 'cardUrl' | 'state' | 'reason' | 'lastError' | 'latencyMs'>>({
  name: isString,
  cardUrl: isString,
  state: oneOf(...PEER_STATES),
  reason: optional(isString),
  lastError: optional(isString),
  latencyMs: optional(isNumber),
}) as Guard<PeerStatus>;

/** A peer status as printed: its security line only when it has the shape the CLI reads. */
const isPrintedPeer: Guard<PeerStatus> = (value): value is PeerStatus =>
  isPeer(value) && optional(isSecurity)(value.security);

const isGraphAgent = shape<GraphAgent>({
  name: isString,
  kind: oneOf('llm', 'remote'),
  detail: strings,
  health: optional(shape({ state: oneOf(...PEER_STATES), reason: optional(isString) })),
  cardUrl: optional(isString),
});

const isGraph = shape<AgentGraph>({ root: isString, agents: arrayOf(isGraphAgent) });

const none: Guard<AgentView[]> = (value): value is AgentView[] => Array.isArray(value) && value.length === 0;

/** An agent at `depth` of the tree: below {@link MAX_TREE_DEPTH} levels it may have no sub-agents. */
function agentViewAt(depth: number): Guard<AgentView> {
  return shape<AgentView>({
    name: isString,
    kind: oneOf('llm', 'remote'),
    description: isString,
    tools: strings,
    cardUrl: optional(isString),
    subAgents: depth >= MAX_TREE_DEPTH ? none : arrayOf(agentViewAt(depth + 1)),
  });
}

/** `GET /node/agents` of a lango node. */
export const isAgentsReport: Guard<AgentsReport> = shape<AgentsReport>({
  root: agentViewAt(0),
  instruction: isString,
  unmatchedTools: strings,
  families: arrayOf(isFamily),
  remoteAgents: arrayOf(isPrintedPeer),
  graph: isGraph,
  unservedRemotes: isNumber,
});

const isToolView = shape<ToolView>({
  name: isString,
  owner: (value): value is string | null => value === null || isString(value),
  description: isString,
  arguments: arrayOf(
    shape({ name: isString, required: isBoolean, type: isString, description: optional(isString) }),
  ) as Guard<ToolView['arguments']>,
});

/** `GET /node/tools` of a lango node. */
export const isToolsReport: Guard<ToolsReport> = shape<ToolsReport>({ rootName: isString, tools: arrayOf(isToolView) });

/** `GET /node/doctor` of a lango node. */
export const isDoctorReport: Guard<DoctorReport> = shape<DoctorReport>({
  provider: isString,
  model: isString,
  dataDir: isString,
  sandbox: shape({ confined: isBoolean }) as Guard<DoctorReport['sandbox']>,
  families: arrayOf(isFamily),
});

const isHealth = shape<NonNullable<AgentEntry['health']>>({
  state: oneOf(...PEER_STATES, 'unknown'),
  reason: optional(isString),
  lastError: optional(isString),
  latencyMs: optional(isNumber),
  security: optional(isSecurity),
});

const isAgentEntry = shape<AgentEntry>({
  name: isString,
  kind: oneOf('local', 'remote'),
  description: isString,
  capabilities: strings,
  cardUrl: optional(isString),
  health: optional(isHealth),
});

/** `GET /agents`: the catalog the caller's grant offers. */
export interface Catalog {
  root: string;
  agents: AgentEntry[];
}

/** A lango node's catalog (`GET /agents`). */
export const isCatalog: Guard<Catalog> = shape<Catalog>({ root: isString, agents: arrayOf(isAgentEntry) });
