import type { Agent, LlmAgent } from './agent';
import type { ModelRoute, ModelToolSpec } from '../llm/model';
import { toolJsonSchema } from './tool';

/** The delegation function offered to the model (adk-js's name and argument). */
export const TRANSFER_TOOL = 'transfer_to_agent';

/** Where each agent of the tree sits: the agent and its parent (undefined for the root), and where it may transfer. */
export interface TreeIndex {
  root: LlmAgent;
  get(name: string): Agent | undefined;
  parentOf(name: string): LlmAgent | undefined;
  /** {@link routesFor} the agent named `name` (empty for an unknown or remote agent), worked out once per index. */
  routes(name: string): readonly ModelRoute[];
  /**
   * What the model of the agent named `name` is offered: its tools, then the
   * transfer function when it has {@link routes}; worked out once per index
   * (each model call of a stream held its own copy while the answer streamed).
   * Callers must not change it.
   */
  toolSpecs(name: string): ModelToolSpec[];
}

/** Indexes the tree under `root` by name. The first agent with a name wins (names are unique in a built tree). */
export function indexTree(root: LlmAgent): TreeIndex {
  const agents = new Map<string, Agent>();
  const parents = new Map<string, LlmAgent>();
  const visit = (agent: Agent, parent?: LlmAgent) => {
    if (agents.has(agent.name)) return;
    agents.set(agent.name, agent);
    if (parent) parents.set(agent.name, parent);
    if (agent.kind === 'llm') for (const sub of agent.subAgents) visit(sub, agent);
  };
  visit(root);
  const routes = new Map<string, readonly ModelRoute[]>();
  const specs = new Map<string, ModelToolSpec[]>();
  const index: TreeIndex = {
    root,
    get: (name) => agents.get(name),
    parentOf: (name) => parents.get(name),
    routes(name) {
      let found = routes.get(name);
      if (!found) {
        const agent = agents.get(name);
        found = Object.freeze(agent?.kind === 'llm' ? routesFor(agent, index) : []);
        routes.set(name, found);
      }
      return found;
    },
    toolSpecs(name) {
      let found = specs.get(name);
      if (!found) {
        const agent = agents.get(name);
        found = agent?.kind === 'llm' ? agentToolSpecs(agent, index.routes(name)) : [];
        specs.set(name, found);
      }
      return found;
    },
  };
  return index;
}

/** An agent's tools as the model sees them, then the transfer function when it has somewhere to transfer. */
function agentToolSpecs(agent: LlmAgent, routes: readonly ModelRoute[]): ModelToolSpec[] {
  const tools = agent.tools.map((t) => ({ name: t.name, description: t.description, parameters: toolJsonSchema(t) }));
  if (routes.length) tools.push(transferToolSpec(routes));
  return tools;
}

/**
 * The index of whichever tree is current, built once per tree: a tree is
 * rebuilt as a new root (peers or tools change), never changed in place, so
 * an index stays true for its root and goes when the root does.
 * @example
 * const indexOf = treeIndexes();
 * const routes = indexOf(holder.current()).routes('orchestrator');
 */
export function treeIndexes(): (root: LlmAgent) => TreeIndex {
  const indexes = new WeakMap<LlmAgent, TreeIndex>();
  return (root) => {
    let index = indexes.get(root);
    if (!index) {
      index = indexTree(root);
      indexes.set(root, index);
    }
    return index;
  };
}

/**
 * The agents `agent` may transfer to: its sub-agents, then its parent.
 * Empty when it has neither, and then no transfer function is offered.
 */
export function routesFor(agent: LlmAgent, tree: TreeIndex): ModelRoute[] {
  const routes: ModelRoute[] = agent.subAgents.map((sub) => ({
    name: sub.name,
    description: sub.description,
    keywords: [...sub.keywords],
    toolNames: sub.kind === 'llm' ? sub.tools.map((t) => t.name) : [],
    ...(sub.kind === 'remote' ? { remote: true } : {}),
  }));
  const parent = tree.parentOf(agent.name);
  if (parent) {
    routes.push({ name: parent.name, description: parent.description, keywords: [], parent: true, toolNames: [] });
  }
  return routes;
}

/**
 * The routes of the agent named `agentName` in the tree under `root`
 * (empty for an unknown or remote agent): what the offline model routes by.
 */
export function routesOf(root: LlmAgent, agentName: string): readonly ModelRoute[] {
  return indexTree(root).routes(agentName);
}

/** The `transfer_to_agent` function as offered to the model, listing the names it may use. */
export function transferToolSpec(routes: readonly ModelRoute[]): ModelToolSpec {
  const names = routes.map((r) => r.name).join(', ');
  return {
    name: TRANSFER_TOOL,
    description: `Hand the conversation to another agent, which then answers the user. Valid agent names: ${names}.`,
    parameters: {
      type: 'object',
      properties: {
        agent_name: { type: 'string', enum: routes.map((r) => r.name), description: `One of: ${names}.` },
      },
      required: ['agent_name'],
      additionalProperties: false,
    },
  };
}

/** Reads `agent_name` from the model's raw arguments; undefined when absent or unreadable. */
export function transferTarget(rawArguments: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(rawArguments || '{}');
    const name = (parsed as { agent_name?: unknown } | null)?.agent_name;
    return typeof name === 'string' && name.trim() ? name.trim() : undefined;
  } catch {
    return undefined;
  }
}
