import type { AnyTool } from '../agent/tool';
import { treeIndexes } from '../agent/transfer';
import type { LangoConfig } from '../config/schema';
import type { Federation } from '../federation/federation';
import type { Model } from '../llm/model';
import { createAgentTreeHolder, type AgentTreeHolder } from '../orchestration/liveTree';
import { reservedAgentNames } from '../orchestration/tree';
import { createPackageLoader } from '../packages';
import { OWNER } from '../principal';
import { toolFamilies } from '../tools/families';
import { createToolset, type Toolset } from '../toolset/toolset';
import { requireVault } from '../vault/vault';
import { Cleanups, type NodeCore } from './core';
import type { AppDeps } from './deps';
import type { PreparedNode } from './prepare';
import { createConfiguredModel, createNodeFederation } from './services';

/** The node's tools, the live agent tree over them and the model its agents call. */
export interface NodeAgents {
  toolset: Toolset;
  nodeTools: () => AnyTool[];
  tree: AgentTreeHolder;
  model: Model;
}

/** Opens the tool families and builds the agent tree over them (rebuilt when tools change) and the model. */
export async function buildAgents(
  config: LangoConfig,
  deps: AppDeps,
  node: PreparedNode,
  core: NodeCore,
  cleanups: Cleanups,
): Promise<NodeAgents> {
  const { logger } = node;
  const toolset = await createToolset(toolFamilies, {
    config,
    dataDir: node.dataDir,
    stores: core.stores,
    vault: core.vault,
    secretReferences: core.secretReferences,
    principals: core.callers,
    logger,
    secrets: node.secrets,
    clock: node.clock,
    packages: deps.packages ?? createPackageLoader(),
    systemChromium: deps.systemChromium,
  });
  cleanups.push(() => toolset.close());

  // The tree holds no model: the runner gives every agent the node's model, which the offline model
  // needs the tree for (it routes by the keywords and tools of the agent it speaks for).
  const nodeTools = () => [...toolset.tools, ...node.extraTools];
  const tree = createAgentTreeHolder({
    tools: nodeTools,
    specs: node.specs,
    familyOf: (toolName) => toolset.familyOf(toolName),
    multiAgent: config.agent.multiAgent,
    maxDelegationRounds: config.agent.maxDelegationRounds,
    systemPrompt: node.systemPrompt,
    subAgentPrompt: node.subAgentPrompt,
  });
  toolset.onToolsChanged(() => {
    tree.rebuild();
    logger.info('agent tree rebuilt', { component: 'tools', tools: toolset.tools.length });
  });
  // The offline model routes by the current tree; each tree's routes are worked out once.
  const offlineIndexOf = treeIndexes();
  const model =
    deps.model ??
    createConfiguredModel(config, {
      logger: logger.child({ component: 'llm' }),
      routes: (agentName) => offlineIndexOf(tree.current()).routes(agentName),
    });
  return { toolset, nodeTools, tree, model };
}

/** Starts the federation of `a2a.remoteAgents`, its peers joining the tree; undefined when there is none. */
export async function startFederation(
  config: LangoConfig,
  node: PreparedNode,
  core: NodeCore,
  agents: NodeAgents,
  cleanups: Cleanups,
): Promise<Federation | undefined> {
  const { logger } = node;
  const { tree } = agents;
  const federation = createNodeFederation(config, {
    logger,
    nodeId: core.nodeId,
    cwd: node.cwd,
    localNames: [...tree.agentNames(), ...reservedAgentNames(node.specs)],
    // Outbound credentials for peers may be `{{secret:NAME}}` references into the owner's vault.
    resolveSecret: (name) => requireVault(core.vault).secretValue(OWNER, name),
    secrets: node.secrets,
  });
  if (federation) {
    cleanups.push(() => federation.close());
    await federation.start();
    // A peer that is down stays in the tree as a stand-in answering that it is unavailable.
    federation.onChange((remoteAgents) => {
      tree.rebuild(federation.routable());
      logger.info('agent tree rebuilt', { component: 'federation', remoteAgents: remoteAgents.map((a) => a.name) });
    });
    tree.rebuild(federation.routable());
  }
  return federation;
}
