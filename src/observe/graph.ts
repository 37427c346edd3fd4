import type { Agent } from '../agent/agent';
import type { PeerState, PeerStatus } from '../federation/health';

/** One agent under the root: a specialist with its tool families, or a remote agent with its health. */
export interface GraphAgent {
  name: string;
  kind: 'llm' | 'remote';
  /**
   * A specialist's tool families, as the family table names them (`exec`,
   * `fs`, `librarian`; a tool outside every family by its own name).
   */
  detail: string[];
  health?: { state: PeerState; reason?: string };
  cardUrl?: string;
}

/** The agent tree and the federation as one picture: the root and the agents under it. */
export interface AgentGraph {
  root: string;
  agents: GraphAgent[];
}

/**
 * The graph of a tree and its peers: each agent under the root (a
 * specialist with the tool families its tools come from, by `familyOf`, the
 * family table's lookup), remote ones with their health, and configured
 * peers not in the tree (skipped, open) with theirs and the reason.
 * @example
 * const graph = agentGraph(app.root(), app.peers(), (tool) => toolset.familyOf(tool));
 * process.stdout.write(toMermaid(graph));
 */
export function agentGraph(
  root: Agent,
  peers: readonly PeerStatus[],
  familyOf: (toolName: string) => string | undefined,
): AgentGraph {
  const health = new Map(peers.map((p) => [p.name, { state: p.state, ...(p.reason ? { reason: p.reason } : {}) }]));
  const agents: GraphAgent[] = (root.kind === 'llm' ? root.subAgents : []).map((agent) =>
    agent.kind === 'llm'
      ? { name: agent.name, kind: 'llm', detail: [...new Set(agent.tools.map((t) => familyOf(t.name) ?? t.name))] }
      : {
          name: agent.name,
          kind: 'remote',
          detail: [],
          health: health.get(agent.name) ?? { state: 'healthy' },
          cardUrl: agent.cardUrl,
        },
  );
  for (const peer of peers) {
    if (agents.some((a) => a.name === peer.name)) continue;
    agents.push({ name: peer.name, kind: 'remote', detail: [], health: health.get(peer.name), cardUrl: peer.cardUrl });
  }
  return { root: root.name, agents };
}

/** What a remote agent's health reads as in a picture: `healthy`, `open`, `skipped: <reason>`. */
function healthText(agent: GraphAgent): string {
  if (!agent.health) return '';
  return agent.health.reason ? `${agent.health.state}: ${agent.health.reason}` : agent.health.state;
}

/** Lines of a node's label: its name, then its families or health. */
function labelLines(agent: GraphAgent): string[] {
  if (agent.kind === 'remote') return [`${agent.name} (remote)`, healthText(agent)].filter(Boolean);
  return [agent.name, ...(agent.detail.length ? [agent.detail.join(', ')] : [])];
}

const shorten = (text: string, max = 60) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The graph as a Mermaid flowchart. */
export function toMermaid(graph: AgentGraph): string {
  const escape = (text: string) => shorten(text).replace(/"/g, '#quot;');
  const lines = ['flowchart TD', `  root["${escape(graph.root)}"]`];
  graph.agents.forEach((agent, index) => {
    const label = labelLines(agent).map(escape).join('<br/>');
    const id = `a${index}`;
    lines.push(agent.kind === 'remote' ? `  ${id}(["${label}"]):::${classOf(agent)}` : `  ${id}["${label}"]`);
    lines.push(agent.kind === 'remote' && agent.health?.state !== 'healthy' ? `  root -.-> ${id}` : `  root --> ${id}`);
  });
  lines.push(
    '  classDef healthy stroke:#1a7f37,stroke-width:2px',
    '  classDef open stroke:#cf222e,stroke-width:2px',
    '  classDef halfopen stroke:#9a6700,stroke-width:2px',
    '  classDef skipped stroke:#6e7781,stroke-dasharray:4',
  );
  return lines.join('\n') + '\n';
}

/** The graph in Graphviz DOT. */
export function toDot(graph: AgentGraph): string {
  const quote = (text: string) => `"${shorten(text).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  const lines = ['digraph agents {', '  rankdir=TB;', '  node [shape=box, fontname="sans-serif"];'];
  lines.push(`  root [label=${quote(graph.root)}, style=bold];`);
  graph.agents.forEach((agent, index) => {
    const label = labelLines(agent)
      .map((l) => quote(l).slice(1, -1))
      .join('\\n');
    const style =
      agent.kind === 'remote'
        ? `, shape=ellipse, color="${COLORS[agent.health?.state ?? 'healthy']}"${agent.health?.state === 'skipped' ? ', style=dashed' : ''}`
        : '';
    lines.push(`  a${index} [label="${label}"${style}];`);
    lines.push(
      `  root -> a${index}${agent.kind === 'remote' && agent.health?.state !== 'healthy' ? ' [style=dashed]' : ''};`,
    );
  });
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** Stroke colour per peer state: dark enough on white for WCAG AA contrast. */
const COLORS: Record<PeerState, string> = {
  healthy: '#1a7f37',
  down: '#cf222e',
  open: '#cf222e',
  'half-open': '#9a6700',
  skipped: '#57606a',
};

const classOf = (agent: GraphAgent) => (agent.health?.state ?? 'healthy').replace('-', '');

const xml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The graph as a standalone SVG: the root on top, the agents in rows under
 * it, remote agents outlined in their health's colour (dashed when not
 * healthy). Each agent is a focusable group carrying `data-agent`, so the
 * console can open its card on click or Enter.
 */
export function toSvg(graph: AgentGraph): string {
  const box = { width: 200, height: 58, gap: 16 };
  const perRow = Math.max(1, Math.min(graph.agents.length, 5));
  const rows = Math.ceil(graph.agents.length / perRow);
  const width = perRow * (box.width + box.gap) + box.gap;
  const height = 40 + box.height + 50 + rows * (box.height + 40);
  const rootX = (width - box.width) / 2;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="Agent tree of ${xml(graph.root)}" font-family="sans-serif" font-size="12">`,
    `<title>Agent tree of ${xml(graph.root)}</title>`,
    node(graph.root, [graph.root, `${graph.agents.length} agents`], rootX, 20, '#0969da', false, true),
  ];
  graph.agents.forEach((agent, index) => {
    const x = box.gap + (index % perRow) * (box.width + box.gap);
    const y = 20 + box.height + 50 + Math.floor(index / perRow) * (box.height + 40);
    const healthy = agent.kind === 'llm' || agent.health?.state === 'healthy';
    parts.push(
      `<line x1="${rootX + box.width / 2}" y1="${20 + box.height}" x2="${x + box.width / 2}" y2="${y}" stroke="#57606a"${healthy ? '' : ' stroke-dasharray="4"'}/>`,
    );
    const color = agent.kind === 'remote' ? COLORS[agent.health?.state ?? 'healthy'] : '#24292f';
    parts.push(node(agent.name, labelLines(agent), x, y, color, !healthy, false));
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';

  function node(name: string, lines: string[], x: number, y: number, color: string, dashed: boolean, root: boolean) {
    const text = lines
      .slice(0, 3)
      .map(
        (line, i) =>
          `<text x="${x + 10}" y="${y + 20 + i * 16}" fill="#24292f"${i === 0 ? ' font-weight="bold"' : ''}>${xml(shorten(line, 30))}</text>`,
      )
      .join('');
    return `<g class="agent${root ? ' root' : ''}" data-agent="${xml(name)}" tabindex="0" role="button" aria-label="${xml(lines.join(', '))}"><title>${xml(lines.join('\n'))}</title><rect x="${x}" y="${y}" width="${box.width}" height="${box.height}" rx="8" fill="#ffffff" stroke="${color}" stroke-width="2"${dashed ? ' stroke-dasharray="5"' : ''}/>${text}</g>`;
  }
}
