import { walkAgents, type LlmAgent, type RemoteAgent } from '../agent/agent';
import type { AnyTool } from '../agent/tool';
import { buildAgentTree, type AgentTreeOptions } from './tree';

/**
 * The node's one agent tree, owned here: built once at start, rebuilt when
 * the node's tools change (a skill appears) or its remote peers do. Every
 * reader (runner, A2A card, discovery, workflows) asks {@link current} at
 * the moment it needs the tree, so a rebuild reaches them all.
 */
export interface AgentTreeHolder {
  /** The tree as it is now. */
  current(): LlmAgent;
  /** Rebuilds from the node's current tools and `remotes` (the current remotes when omitted); returns the new tree. */
  rebuild(remotes?: readonly RemoteAgent[]): LlmAgent;
  /** Names of every agent in the tree, root first, remote ones included. */
  agentNames(): string[];
}

/** Options of {@link createAgentTreeHolder}: the tree options, with the tools read at each build. */
export interface AgentTreeHolderOptions extends Omit<AgentTreeOptions, 'tools' | 'remoteAgents'> {
  /** The node's tools now (a family may change its own at runtime). */
  tools: () => readonly AnyTool[];
  /** Remote agents of the first build. */
  remoteAgents?: readonly RemoteAgent[];
}

/**
 * Builds the tree at once and holds it. The only caller of
 * {@link buildAgentTree} in the node.
 * @example
 * const tree = createAgentTreeHolder({ tools: () => toolset.tools, model, systemPrompt });
 * federation.onChange((remotes) => tree.rebuild(remotes));
 */
export function createAgentTreeHolder(options: AgentTreeHolderOptions): AgentTreeHolder {
  const { tools, remoteAgents, ...fixed } = options;
  let remotes: readonly RemoteAgent[] = remoteAgents ?? [];
  const build = () => buildAgentTree({ ...fixed, tools: tools(), remoteAgents: remotes });
  let root = build();
  return {
    current: () => root,
    rebuild(next) {
      if (next) remotes = next;
      root = build();
      return root;
    },
    agentNames: () => walkAgents(root).map((agent) => agent.name),
  };
}
