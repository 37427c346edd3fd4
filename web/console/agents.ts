/**
 * The console's agents view: the agent graph laid out by elkjs (layered,
 * orthogonal edges routed around the boxes), each agent opening its card;
 * the remote agents with their live health, breaker and probes and a
 * "probe now" button; in a cluster, the replicas and their heartbeat age.
 */
import { ago, button, byId, el, getJson, postJson, showError, took } from './dom.js';
import { currentRoute, go } from './route.js';

interface GraphAgent {
  name: string;
  kind: 'llm' | 'remote';
  detail: string[];
  health?: { state: string; reason?: string };
  cardUrl?: string;
}
interface AgentGraph {
  root: string;
  agents: GraphAgent[];
}
interface PeerStatus {
  name: string;
  cardUrl: string;
  state: string;
  reason?: string;
  lastError?: string;
  latencyMs?: number;
  protocolVersion?: string;
  failures: number;
  /** The last probe of its card: when, and what it found. */
  lastProbe?: { at: string; ok: boolean; latencyMs?: number; error?: string };
  nextProbeAt?: string;
  /** Since when it has been unusable. */
  since?: string;
}
interface ReplicaInfo {
  replicaId: string;
  startedAt: string;
  heartbeatAgeMs: number;
  live: boolean;
  self: boolean;
}

/** The part of elkjs's API the graph uses (`elk.bundled.js` defines `ELK` on the window). */
interface ElkNode {
  id: string;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  children?: ElkNode[];
  edges?: ElkEdge[];
  layoutOptions?: Record<string, string>;
}
interface ElkEdge {
  id: string;
  sources: string[];
  targets: string[];
  sections?: Array<{
    startPoint: { x: number; y: number };
    endPoint: { x: number; y: number };
    bendPoints?: Array<{ x: number; y: number }>;
  }>;
}
declare global {
  interface Window {
    ELK?: new () => { layout(graph: ElkNode): Promise<ElkNode> };
  }
}

const SVG = 'http://www.w3.org/2000/svg';
/** Stroke colour per peer state: dark enough on white for WCAG AA contrast. */
const HEALTH_COLORS: Record<string, string> = {
  healthy: '#1a7f37',
  down: '#cf222e',
  open: '#cf222e',
  'half-open': '#9a6700',
  skipped: '#57606a',
};
/** The breaker as a person names it, per peer state. */
const BREAKER: Record<string, string> = {
  healthy: 'closed',
  down: 'closed (its card is down)',
  open: 'open',
  'half-open': 'half-open (probing)',
  skipped: 'not joined',
};

let graph: AgentGraph | undefined;
let elkLoading: Promise<void> | undefined;

/** Loads elkjs once, when the graph is first drawn (1.6 MB the other views never need). */
function loadElk(): Promise<void> {
  elkLoading ??= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = '/console/assets/elk.js';
    script.onload = () => resolve();
    script.onerror = () => reject(new Error('the layout library (elk.js) could not be loaded'));
    document.head.append(script);
  });
  return elkLoading;
}

function svg(tag: string, attributes: Record<string, string | number> = {}, text?: string): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** What a remote agent's box says under its name. */
function healthLine(agent: GraphAgent): string {
  const state = agent.health?.state ?? 'healthy';
  return agent.health?.reason ? `${state}: ${agent.health.reason}` : state;
}

/** Draws the graph: the root, its agents, each specialist's tool families, laid out by elkjs. */
export async function loadAgents(): Promise<void> {
  const holder = byId('graph');
  try {
    graph = await getJson<AgentGraph>('/console/api/agents');
    await loadElk();
  } catch (err) {
    return showError(holder, err);
  }
  const Elk = window.ELK;
  if (!Elk || !graph) return showError(holder, new Error('the layout library did not load'));
  const boxes = new Map<string, { label: string[]; agent?: GraphAgent; kind: 'root' | 'agent' | 'family' }>();
  const children: ElkNode[] = [{ id: 'root', width: 190, height: 52 }];
  const edges: ElkEdge[] = [];
  boxes.set('root', { label: [graph.root, `${graph.agents.length} agents`], kind: 'root' });
  graph.agents.forEach((agent, i) => {
    const id = `a${i}`;
    children.push({ id, width: 210, height: 52 });
    edges.push({ id: `e-${id}`, sources: ['root'], targets: [id] });
    const families = agent.detail.length;
    const second =
      agent.kind === 'remote' ? healthLine(agent) : `${families} tool ${families === 1 ? 'family' : 'families'}`;
    boxes.set(id, {
      label: [agent.kind === 'remote' ? `${agent.name} (remote)` : agent.name, second],
      agent,
      kind: 'agent',
    });
    if (agent.kind === 'llm') {
      agent.detail.forEach((family, j) => {
        const fid = `${id}f${j}`;
        children.push({ id: fid, width: 104, height: 26 });
        edges.push({ id: `e-${fid}`, sources: [id], targets: [fid] });
        boxes.set(fid, { label: [family], kind: 'family' });
      });
    }
  });
  const laid = await new Elk().layout({
    id: 'graph',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.edgeRouting': 'ORTHOGONAL',
      // The agents in the tree's order (specialists as the table lists them, then remote agents).
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
      'elk.layered.spacing.nodeNodeBetweenLayers': '56',
      'elk.spacing.nodeNode': '10',
      'elk.spacing.edgeNode': '12',
      'elk.padding': '[top=12,left=12,bottom=12,right=12]',
    },
    children,
    edges,
  });
  const width = Math.ceil(laid.width ?? 600);
  const height = Math.ceil(laid.height ?? 400);
  const picture = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'group',
    'aria-label': `Agent graph of ${graph.root}`,
    'font-family': 'system-ui, sans-serif',
    'font-size': 12,
  });
  const defs = svg('defs');
  const marker = svg('marker', {
    id: 'arrow',
    viewBox: '0 0 10 10',
    refX: 10,
    refY: 5,
    markerWidth: 7,
    markerHeight: 7,
    orient: 'auto',
  });
  marker.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#57606a' }));
  defs.append(marker);
  picture.append(defs);
  for (const edge of laid.edges ?? []) {
    for (const section of edge.sections ?? []) {
      const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
      const target = boxes.get(edge.targets[0]);
      const dashed = target?.agent?.kind === 'remote' && target.agent.health?.state !== 'healthy';
      picture.append(
        svg('path', {
          class: 'edge',
          'data-from': edge.sources[0],
          'data-to': edge.targets[0],
          d: points.map((p, k) => `${k === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' '),
          fill: 'none',
          stroke: '#57606a',
          'stroke-width': 1.5,
          'marker-end': 'url(#arrow)',
          ...(dashed ? { 'stroke-dasharray': '4' } : {}),
        }),
      );
    }
  }
  for (const node of laid.children ?? []) {
    const box = boxes.get(node.id)!;
    const x = node.x ?? 0;
    const y = node.y ?? 0;
    const w = node.width ?? 0;
    const h = node.height ?? 0;
    const group = svg('g', { class: `node ${box.kind}`, 'data-node': node.id });
    const remote = box.agent?.kind === 'remote';
    const state = box.agent?.health?.state ?? 'healthy';
    const stroke = box.kind === 'root' ? '#0550ae' : remote ? (HEALTH_COLORS[state] ?? '#57606a') : '#24292f';
    group.append(
      svg('rect', {
        x,
        y,
        width: w,
        height: h,
        rx: box.kind === 'family' ? 13 : 8,
        fill: box.kind === 'family' ? '#f6f8fa' : '#ffffff',
        stroke,
        'stroke-width': box.kind === 'family' ? 1 : 2,
        ...(remote && state !== 'healthy' ? { 'stroke-dasharray': '5' } : {}),
      }),
    );
    box.label.forEach((line, k) => {
      const limit = box.kind === 'family' ? 14 : 28;
      group.append(
        svg(
          'text',
          {
            x: x + (box.kind === 'family' ? 10 : 10),
            y: y + (box.kind === 'family' ? 17 : 20 + k * 16),
            fill: k === 0 ? '#1f2328' : '#57606a',
            ...(k === 0 && box.kind !== 'family' ? { 'font-weight': 'bold' } : {}),
          },
          cut(line, limit),
        ),
      );
    });
    if (box.kind !== 'family') {
      const name = box.agent?.name ?? graph.root;
      group.classList.add('agent');
      group.setAttribute('data-agent', name);
      group.setAttribute('tabindex', '0');
      group.setAttribute('role', 'button');
      group.setAttribute(
        'aria-label',
        box.agent
          ? `${box.label.join(', ')}${box.agent.kind === 'llm' ? `: ${box.agent.detail.join(', ')}` : ''}`
          : box.label.join(', '),
      );
      group.append(svg('title', {}, box.label.join('\n')));
      group.addEventListener('click', () => go('agents', { agent: name }));
      group.addEventListener('keydown', (event) => {
        if ((event as KeyboardEvent).key === 'Enter' || (event as KeyboardEvent).key === ' ') {
          event.preventDefault();
          go('agents', { agent: name });
        }
      });
    }
    picture.append(group);
  }
  holder.replaceChildren(picture);
}

/** Opens an agent's card (the address's `agent`), once the graph is read. */
export async function openAgent(name: string): Promise<void> {
  if (!graph) await loadAgents();
  const agent = graph?.agents.find((a) => a.name === name);
  byId('card-title').textContent = agent?.kind === 'remote' ? `Card of ${name}` : name;
  let body: string;
  if (agent?.kind === 'remote') {
    const res = await fetch(`/console/api/agents/${encodeURIComponent(name)}/card`, { credentials: 'same-origin' });
    body = `health: ${healthLine(agent)}\n` + (res.ok ? await res.text() : `no card held (${res.status})`);
  } else if (agent) {
    body = `specialist; tool families: ${agent.detail.join(', ') || 'none'}`;
  } else {
    body = `orchestrator over ${graph?.agents.length ?? 0} agents`;
  }
  byId('card-body').textContent = body;
  byId('card').hidden = false;
  byId<HTMLButtonElement>('card-close').focus();
}

/** The remote agents table: health, breaker, failures, probes, latency, the last error, "probe now". */
export async function loadPeers(): Promise<void> {
  const rows = byId('peer-rows');
  let peers: PeerStatus[];
  try {
    ({ peers } = await getJson<{ peers: PeerStatus[] }>('/console/api/peers'));
  } catch (err) {
    return showError(rows, err);
  }
  byId('peers-empty').hidden = peers.length > 0;
  byId('peers-table').hidden = peers.length === 0;
  rows.replaceChildren(
    ...peers.map((peer) => {
      const row = el('tr', undefined, { 'data-peer': peer.name });
      const probe = button('Probe now', () => probeNow(peer.name, probe as HTMLButtonElement), {
        'aria-label': `Probe ${peer.name} now`,
      });
      const action = el('td');
      action.append(probe);
      row.append(
        el('th', peer.name, { scope: 'row' }),
        el('td', peer.since ? `${peer.state} since ${new Date(peer.since).toLocaleTimeString()}` : peer.state, {
          class: `health ${peer.state}`,
        }),
        el('td', BREAKER[peer.state] ?? peer.state, { class: 'breaker' }),
        el('td', String(peer.failures)),
        el('td', lastProbe(peer), { class: 'last-probe' }),
        el('td', peer.nextProbeAt ? ago(peer.nextProbeAt) : '—'),
        el('td', peer.latencyMs !== undefined ? took(peer.latencyMs) : '—'),
        el('td', peer.lastError ?? peer.reason ?? '', { class: 'io' }),
        action,
      );
      return row;
    }),
  );
}

/** The last probe as a person reads it: when, and whether the card answered. */
function lastProbe(peer: PeerStatus): string {
  const probe = peer.lastProbe;
  if (!probe) return '—';
  return `${ago(probe.at)} · ${probe.ok ? `answered${probe.latencyMs !== undefined ? ` in ${took(probe.latencyMs)}` : ''}` : 'failed'}`;
}

async function probeNow(name: string, control: HTMLButtonElement): Promise<void> {
  control.disabled = true;
  control.textContent = 'Probing…';
  try {
    const { status, body } = await postJson<{ error?: { message: string } }>(
      `/console/api/peers/${encodeURIComponent(name)}/probe`,
      {},
    );
    if (status !== 200) throw new Error(body.error?.message ?? `HTTP ${status}`);
    byId('peers-status').textContent = `${name} probed just now.`;
  } catch (err) {
    byId('peers-status').textContent =
      `The probe of ${name} failed: ${err instanceof Error ? err.message : String(err)}`;
  }
  await Promise.all([loadPeers(), loadAgents()]);
}

/** The replicas of a cluster and their heartbeat age, or a line saying the node runs alone. */
export async function loadReplicas(): Promise<void> {
  const rows = byId('replica-rows');
  try {
    const { clustered, replicas } = await getJson<{ clustered: boolean; replicas: ReplicaInfo[] }>(
      '/console/api/replicas',
    );
    byId('replicas-alone').hidden = clustered;
    byId('replicas-table').hidden = !clustered;
    rows.replaceChildren(
      ...replicas.map((r) => {
        const row = el('tr', undefined, { 'data-replica': r.replicaId });
        row.append(
          el('th', `${r.replicaId}${r.self ? ' (this replica)' : ''}`, { scope: 'row' }),
          el('td', r.live ? 'live' : 'silent', { class: `health ${r.live ? 'healthy' : 'open'}` }),
          el('td', took(r.heartbeatAgeMs), { class: 'age' }),
          el('td', ago(r.startedAt)),
        );
        return row;
      }),
    );
  } catch (err) {
    showError(rows, err);
  }
}

/** Wires the card's close button. */
export function startAgents(): void {
  byId('card-close').addEventListener('click', () => {
    byId('card').hidden = true;
    if (currentRoute().params.has('agent')) go('agents');
  });
}
