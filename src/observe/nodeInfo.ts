import type { Agent, LlmAgent } from '../agent/agent';
import { toolFields, type AnyTool, type ToolField } from '../agent/tool';
import type { LangoConfig } from '../config/schema';
import type { PeerStatus } from '../federation/health';
import { SINGLE_AGENT_NAME } from '../orchestration/tree';
import type { FamilyStatus } from '../toolset/toolset';
import type { SandboxStatus } from '../tools/operator/sandbox';
import { pageRouter } from '../a2a/bindings/pageRouter';
import type { Pages } from '../a2a/bindings/routes';
import { agentGraph, type AgentGraph } from './graph';

/**
 * What `lango tools`, `lango doctor` and `lango agents` report of a node, as
 * data: built here from the node's parts, so the CLI prints the same thing
 * whether it built the node in its own process or asks the node serving the
 * data folder (issue 28), through the owner-only routes of
 * {@link nodeInfoRoutes}.
 */

/** One tool as `lango tools` shows it. */
export interface ToolView {
  name: string;
  /** The specialist it lands with; null when unmatched, or in single-agent mode. */
  owner: string | null;
  description: string;
  arguments: ToolField[];
}

/** `GET /node/tools`: every tool of the node, and the root's name (which says single- or multi-agent). */
export interface ToolsReport {
  rootName: string;
  tools: ToolView[];
}

/** `GET /node/doctor`: the model, the data folder, the command sandbox and each tool family. */
export interface DoctorReport {
  provider: string;
  model: string;
  dataDir: string;
  sandbox: SandboxStatus;
  families: FamilyStatus[];
}

/** One agent of the tree as `lango agents` shows it. */
export interface AgentView {
  name: string;
  kind: 'llm' | 'remote';
  description: string;
  tools: string[];
  cardUrl?: string;
  subAgents: AgentView[];
}

/** `GET /node/agents`: the tree with its tools and the root's instruction, tool families, remote agents' health. */
export interface AgentsReport {
  root: AgentView;
  instruction: string;
  unmatchedTools: string[];
  families: FamilyStatus[];
  remoteAgents: PeerStatus[];
  graph: AgentGraph;
  /** Remote agents the configuration lists but the node does not use because A2A is off. */
  unservedRemotes: number;
}

/** What the reports read from the node, when asked. */
export interface NodeInfoSources {
  config: LangoConfig;
  dataDir: string;
  root: () => LlmAgent;
  /** Every tool now with the specialist it lands with (undefined: unmatched, or the single agent's). */
  tools: () => ReadonlyArray<{ tool: AnyTool; owner?: string }>;
  unmatchedTools: () => string[];
  families: () => readonly FamilyStatus[];
  peers: () => PeerStatus[];
  /** Probes the remote agents now (`agents --check`); resolves with their health. */
  probePeers: () => Promise<PeerStatus[]>;
  sandbox: () => Promise<SandboxStatus>;
}

/** The tree under `agent` as data: names, descriptions, tools and remote card URLs. */
export function agentView(agent: Agent): AgentView {
  if (agent.kind === 'remote') {
    const { name, description, cardUrl } = agent;
    return { name, kind: 'remote', description, tools: [], cardUrl, subAgents: [] };
  }
  return {
    name: agent.name,
    kind: 'llm',
    description: agent.description,
    tools: agent.tools.map((t) => t.name),
    subAgents: agent.subAgents.map(agentView),
  };
}

/** `lango tools`' report. */
export function toolsReport(sources: NodeInfoSources): ToolsReport {
  return {
    rootName: sources.root().name,
    tools: sources.tools().map(({ tool, owner }) => ({
      name: tool.name,
      owner: owner ?? null,
      description: tool.description,
      arguments: toolFields(tool),
    })),
  };
}

/** `lango doctor`'s report. */
export async function doctorReport(sources: NodeInfoSources): Promise<DoctorReport> {
  const { agent } = sources.config;
  return {
    provider: agent.provider ?? 'offline',
    model: agent.model,
    dataDir: sources.dataDir,
    sandbox: await sources.sandbox(),
    families: [...sources.families()],
  };
}

/** `lango agents`' report; with `probe`, the remote agents are probed first (`--check`). */
export async function agentsReport(sources: NodeInfoSources, options: { probe?: boolean } = {}): Promise<AgentsReport> {
  const peers = options.probe ? await sources.probePeers() : sources.peers();
  const root = sources.root();
  const { a2a } = sources.config;
  const families = sources.families();
  return {
    root: agentView(root),
    instruction: root.instruction,
    unmatchedTools: sources.unmatchedTools(),
    families: [...families],
    remoteAgents: peers,
    graph: agentGraph(root, peers, (tool) => families.find((family) => family.tools.includes(tool))?.name),
    unservedRemotes: a2a.enabled ? 0 : a2a.remoteAgents.filter((entry) => entry.enabled).length,
  };
}

/** Whether a tool without an owner is the single agent's (else it is unmatched). */
export const ownsEveryTool = (rootName: string): boolean => rootName === SINGLE_AGENT_NAME;

/**
 * `GET /node/tools`, `GET /node/doctor` and `GET /node/agents[?probe=1]`:
 * the reports above, rows of the route table for the node's owner only, so
 * the CLI gives the full answer while a node serves.
 * @example
 * const pages = nodeInfoPages(sources); // joins the route table (`createA2AServer`'s `pages`)
 */
export function nodeInfoPages(sources: NodeInfoSources): Pages {
  const router = pageRouter({ name: 'node', access: 'owner' });
  router.get('/node/tools', (_req, res) => {
    res.json(toolsReport(sources));
  });
  router.get('/node/doctor', async (_req, res) => {
    res.json(await doctorReport(sources));
  });
  router.get('/node/agents', async (req, res) => {
    res.json(await agentsReport(sources, { probe: req.query.probe === '1' }));
  });
  return router.pages();
}
