import type { PeerStatus } from '../../federation/health';
import type { FamilyStatus } from '../../index';
import { InputError, LangoError } from '../../errors';
import { ExitCode, type CliIO } from '../io';
import { targetFor, type CliContext } from '../context';
import type { CommandRun } from '../commandRun';
import { fetchNodeAnswer, fetchNodeReport } from '../nodeHttp';
import { toDot, toMermaid, toSvg, type AgentGraph } from '../../observe/graph';
import type { AgentsReport, AgentView } from '../../observe/nodeInfo';
import { isAgentsReport, isCatalog, type Catalog } from '../reports';
import { cardGraph, cardView, renderCardView } from '../cardView';

/** `--format` pictures of the tree and federation. */
const PICTURES = { mermaid: toMermaid, dot: toDot, svg: toSvg } as const;
type PictureFormat = keyof typeof PICTURES;

/** The picture renderer `--format` names; undefined for the plain listing. */
function pictureOf(format: string | undefined): ((graph: AgentGraph) => string) | undefined {
  if (format === undefined || format === 'text') return undefined;
  if (format in PICTURES) return PICTURES[format as PictureFormat];
  throw new InputError(`--format must be text, mermaid, dot or svg (got "${format}")`);
}

/** What `lango agents` was asked for. */
interface AgentsOptions {
  json?: boolean;
  instruction?: boolean;
  check?: boolean;
  format?: string;
}

function render(agent: AgentView, depth: number, out: string[]): void {
  const pad = '  '.repeat(depth);
  const where = agent.kind === 'remote' ? ` (remote: ${agent.cardUrl})` : '';
  out.push(`${pad}${agent.name}${where}`);
  if (agent.description) out.push(`${pad}  ${agent.description}`);
  if (agent.tools.length) out.push(`${pad}  tools: ${agent.tools.join(', ')}`);
  for (const sub of agent.subAgents) render(sub, depth + 1, out);
}

function renderPeers(peers: PeerStatus[]): string[] {
  if (!peers.length) return ['remote agents: none configured'];
  return [
    'remote agents:',
    ...peers.map((p) => {
      const details = [
        p.protocolVersion && `A2A ${p.protocolVersion}`,
        p.latencyMs !== undefined && `${Math.round(p.latencyMs)} ms`,
        p.reason && `reason: ${p.reason}`,
        p.lastError && p.lastError !== p.reason && `last error: ${p.lastError}`,
      ].filter(Boolean);
      const line = `  ${p.name.padEnd(16)} ${p.state.padEnd(9)} ${p.cardUrl}${details.length ? ` (${details.join('; ')})` : ''}`;
      return [line, ...(p.security ? [securityLine(p.security)] : []), ...identityLines(p)].join('\n');
    }),
  ];
}

/** What a peer offers and how calls to it fare (issue 33): its skills, on-behalf-of, the last hop's latency. */
function identityLines(peer: PeerStatus): string[] {
  const pad = `  ${''.padEnd(16)} `;
  const lines: string[] = [];
  if (peer.skills?.length) lines.push(`${pad}skills: ${peer.skills.join(', ')}`);
  const delegation = peer.onBehalfOf;
  if (delegation) {
    const verdict =
      delegation.ok === undefined
        ? 'not checked yet'
        : delegation.ok
          ? `works (token exchange succeeded${delegation.probe ? " with the node's own token" : ''})`
          : `FAILS: ${delegation.reason ?? 'token exchange failed'}`;
    lines.push(`${pad}on-behalf-of (${delegation.mode}): ${verdict}`);
  }
  if (peer.lastHopMs !== undefined) lines.push(`${pad}last hop: ${Math.round(peer.lastHopMs)} ms`);
  return lines;
}

/** What a peer's card asks of callers and whether its entry gives it (issue 26). */
function securityLine(security: NonNullable<PeerStatus['security']>): string {
  const verdict = security.satisfied ? 'satisfied' : 'NOT satisfied';
  return `  ${''.padEnd(16)} auth: requires ${security.requires}; ${verdict}: ${security.note}`;
}

/** Tool families that are not on, so a specialist that is missing says why (no browser → no navigator). */
function renderMissing(families: readonly FamilyStatus[]): string[] {
  const missing = families.filter((f) => f.state !== 'on');
  if (!missing.length) return [];
  return [
    'not running:',
    ...missing.map(
      (f) =>
        `  ${f.name} (${f.agent}): ${f.state === 'off' ? 'disabled by config' : `${f.optional ? 'unavailable' : 'broken'}: ${f.reason}`}`,
    ),
  ];
}

/** Prints the report as asked; the exit code: with --check, 1 when a configured remote agent is unusable. */
function print(report: AgentsReport, options: AgentsOptions, ctx: CliContext): number {
  const picture = pictureOf(options.format);
  const peers = report.remoteAgents;
  if (options.instruction) {
    ctx.io.out(report.instruction + '\n');
  } else if (picture) {
    ctx.io.out(picture(report.graph));
  } else if (options.json) {
    const json = {
      root: report.root,
      unmatchedTools: report.unmatchedTools,
      missingFamilies: report.families.filter((f) => f.state !== 'on'),
      ...(options.check ? { remoteAgents: peers } : {}),
    };
    ctx.io.out(JSON.stringify(json, null, 2) + '\n');
  } else {
    const lines: string[] = [];
    render(report.root, 0, lines);
    lines.push(`unmatched tools: ${report.unmatchedTools.length ? report.unmatchedTools.join(', ') : 'none'}`);
    lines.push(...renderMissing(report.families));
    if (options.check) lines.push(...renderPeers(peers));
    ctx.io.out(lines.join('\n') + '\n');
  }
  if (options.check && report.unservedRemotes > 0)
    ctx.io.err(`lango: ${report.unservedRemotes} remote agent(s) configured, but a2a.enabled is false: none is used\n`);
  const unhealthy =
    peers.some((p) => p.state !== 'healthy' || p.onBehalfOf?.ok === false) || report.unservedRemotes > 0;
  return options.check && unhealthy ? ExitCode.failure : ExitCode.ok;
}

/**
 * `lango agents`: the agent tree, its tools and unmatched tools;
 * `--instruction` prints the orchestrator's prompt; `--check` probes every
 * remote agent at once and shows its health. While a node serves the data
 * folder, its owner-only `/node/agents` says the same of that node; any
 * other A2A node shows its catalog, else what its card says.
 */
export async function agents({ ctx, globals, options: given }: CommandRun): Promise<number> {
  const options = given as AgentsOptions;
  pictureOf(options.format);
  const target = await targetFor(globals, ctx, { command: 'agents', runJobs: false });
  if (target.kind === 'remote') {
    const path = `node/agents${options.check ? '?probe=1' : ''}`;
    const answer = await fetchNodeReport<unknown>(target.url, path, target.owner);
    return answer.ok && isAgentsReport(answer.report)
      ? print(answer.report, options, ctx)
      : otherAgents(target.url, answer.ok ? 'HTTP 200, not a lango report' : answer.why, options, ctx.io);
  }
  try {
    const { agentsReport } = await import('../../observe/nodeInfo');
    return print(await agentsReport(target.app.info, { probe: options.check }), options, ctx);
  } finally {
    await target.close();
  }
}

/**
 * `agents` against a node that does not show this caller its report: its
 * public catalog (`GET /agents`, what its grant offers) when it is a lango
 * node, else what its agent card says (any A2A node), else one line why not.
 */
async function otherAgents(url: string, why: string, options: AgentsOptions, io: CliIO): Promise<number> {
  if (options.instruction)
    throw new InputError(`--instruction needs the node's owner, and the node at ${url} refused (${why})`);
  const catalog = await fetchNodeAnswer(url, 'agents');
  if (catalog.status === 200 && isCatalog(catalog.body)) return catalogAgents(url, catalog.body, why, options, io);
  const cardAnswer = await fetchNodeAnswer(url, '.well-known/agent-card.json');
  const view = cardAnswer.status === 200 ? cardView(cardAnswer.body) : undefined;
  if (!view)
    throw new LangoError(
      `the node at ${url} shows no agents: /node/agents ${why}; /agents HTTP ${catalog.status}` +
        `${catalog.status === 200 ? ' (not a lango catalog)' : ''}; /.well-known/agent-card.json HTTP ${cardAnswer.status}` +
        `${cardAnswer.status === 200 ? ' (not an agent card)' : ''}`,
    );
  const noCatalog = `/agents HTTP ${catalog.status}${catalog.status === 200 ? ', not a lango catalog' : ''}`;
  const picture = pictureOf(options.format);
  if (picture) io.out(picture(cardGraph(view)));
  else if (options.json) io.out(JSON.stringify({ node: url, card: view }, null, 2) + '\n');
  else io.out(renderCardView(view, url, noCatalog).join('\n') + '\n');
  return ExitCode.ok;
}

/** A lango node's public catalog: agents, capabilities and remote health, but not tools or prompts. */
function catalogAgents(url: string, catalog: Catalog, why: string, options: AgentsOptions, io: CliIO): number {
  const picture = pictureOf(options.format);
  if (picture) {
    io.out(
      picture({
        root: catalog.root,
        agents: catalog.agents.map((agent) => ({
          name: agent.name,
          kind: agent.kind === 'remote' ? 'remote' : 'llm',
          detail: agent.capabilities,
          cardUrl: agent.cardUrl,
          ...(agent.health
            ? {
                health:
                  agent.health.state === 'unknown'
                    ? { state: 'skipped' as const, reason: 'health unknown' }
                    : { state: agent.health.state, ...(agent.health.reason ? { reason: agent.health.reason } : {}) },
              }
            : {}),
        })),
      }),
    );
  } else if (options.json) {
    io.out(JSON.stringify({ node: url, ...catalog }, null, 2) + '\n');
  } else {
    const lines = [`${catalog.root} (node at ${url}; its catalog: ${why})`];
    for (const agent of catalog.agents) {
      const health = agent.health
        ? ` ${agent.health.state}${agent.health.reason ? ` (${agent.health.reason})` : ''}`
        : '';
      lines.push(`  ${agent.name}${agent.kind === 'remote' ? ` (remote: ${agent.cardUrl ?? '?'})${health}` : ''}`);
      if (agent.capabilities.length) lines.push(`    ${agent.capabilities.join(', ')}`);
      if (options.check && agent.health?.security) lines.push(securityLine(agent.health.security));
    }
    io.out(lines.join('\n') + '\n');
  }
  const unhealthy = catalog.agents.some((a) => a.kind === 'remote' && a.health?.state !== 'healthy');
  return options.check && unhealthy ? ExitCode.failure : ExitCode.ok;
}
