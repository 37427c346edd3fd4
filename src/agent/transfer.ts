import type { Agent, LlmAgent } from './agent';
import type { ModelRoute, ModelToolSpec } from '../llm/model';

/** The delegation function offered to the model (adk-js's name and argument). */
export const TRANSFER_TOOL = 'transfer_to_agent';

/** Where each agent of the tree sits: the agent and its parent (undefined for the root). */
export interface TreeIndex {
  root: LlmAgent;
  get(name: string): Agent | undefined;
  parentOf(name: string): LlmAgent | undefined;
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
  return { root, get: (name) => agents.get(name), parentOf: (name) => parents.get(name) };
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
export function routesOf(root: LlmAgent, agentName: string): ModelRoute[] {
  const tree = indexTree(root);
  const agent = tree.get(agentName);
  return agent?.kind === 'llm' ? routesFor(agent, tree) : [];
}

/** The `transfer_to_agent` function as offered to the model, listing the names it may use. */
export function transferToolSpec(routes: ModelRoute[]): ModelToolSpec {
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
