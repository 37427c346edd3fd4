import { walkAgents, type LlmAgent, type RemoteAgent } from '../agent/agent';
import type { AnyTool } from '../agent/tool';
import { buildAgentTree, type AgentTreeOptions } from './tree';
import { agentSpecs } from './specs';
import { ownerOfTool } from './partition';
import { isOwner, mayReach, mayUseToolOf, type Principal } from '../principal';

/**
 * The node's one agent tree, owned here: built once at start, rebuilt when
 * the node's tools change (a skill appears) or its remote peers do. Every
 * reader (runner, A2A card, discovery, workflows) asks {@link current} at
 * the moment it needs the tree, so a rebuild reaches them all.
 */
export interface AgentTreeHolder {
  /**
   * The tree as it is now; for a named caller, the tree its grant allows
   * (issue 11 A): only its specialists and remote agents, each specialist
   * with only the tools of its granted families, so the orchestrator's
   * routing table and `transfer_to_agent` choices offer nothing else.
   */
  current(principal?: Principal): LlmAgent;
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
  /** The family of a tool (the toolset's); a caller's tree keeps only the tools of its granted families. */
  familyOf?: (toolName: string) => string | undefined;
}

/**
 * Builds the tree at once and holds it. The only caller of
 * {@link buildAgentTree} in the node.
 * @example
 * const tree = createAgentTreeHolder({ tools: () => toolset.tools, model, systemPrompt });
 * federation.onChange((remotes) => tree.rebuild(remotes));
 */
export function createAgentTreeHolder(options: AgentTreeHolderOptions): AgentTreeHolder {
  const { tools, remoteAgents, familyOf, ...fixed } = options;
  const specs = fixed.specs ?? agentSpecs;
  let remotes: readonly RemoteAgent[] = remoteAgents ?? [];
  const build = () => buildAgentTree({ ...fixed, tools: tools(), remoteAgents: remotes });
  let root = build();
  /** Callers' trees by grant, built on first use and dropped at every rebuild. */
  let granted = new Map<string, LlmAgent>();
  const buildFor = (principal: Principal) =>
    buildAgentTree({
      ...fixed,
      // A tool is offered when its family is granted and the specialist owning it is (an unowned tool never is).
      tools: tools().filter((tool) => {
        const owner = ownerOfTool(tool, specs);
        return (
          owner !== undefined &&
          mayReach(principal, 'specialists', owner) &&
          mayUseToolOf(principal, familyOf?.(tool.name))
        );
      }),
      remoteAgents: remotes.filter((remote) => mayReach(principal, 'remoteAgents', remote.name)),
      specs: specs.filter((spec) => mayReach(principal, 'specialists', spec.name)),
    });
  return {
    current(principal) {
      if (!principal || isOwner(principal)) return root;
      const key = JSON.stringify(principal.grant ?? null);
      let tree = granted.get(key);
      if (!tree) granted.set(key, (tree = buildFor(principal)));
      return tree;
    },
    rebuild(next) {
      if (next) remotes = next;
      root = build();
      granted = new Map();
      return root;
    },
    agentNames: () => walkAgents(root).map((agent) => agent.name),
  };
}
