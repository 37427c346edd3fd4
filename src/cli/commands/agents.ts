import type { Command } from 'commander';
import type { PeerStatus } from '../../federation/health';
import type { FamilyStatus } from '../../index';
import type { AgentEntry } from '../../a2a/bindings/discovery';
import { InputError, LangoError } from '../../errors';
import { ExitCode, type CliIO } from '../io';
import { configFor, targetFor, type CliContext, type GlobalOptions } from '../context';
import { fetchNodeJson, fetchNodeReport } from '../nodeClient';
import { toDot, toMermaid, toSvg, type AgentGraph } from '../../observe/graph';
import { agentsReport, type AgentsReport, type AgentView } from '../../observe/nodeInfo';

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
      return p.security ? `${line}\n${securityLine(p.security)}` : line;
    }),
  ];
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
  const unhealthy = peers.some((p) => p.state !== 'healthy') || report.unservedRemotes > 0;
  return options.check && unhealthy ? ExitCode.failure : ExitCode.ok;
}

/**
 * `lango agents`: the agent tree, its tools and unmatched tools;
 * `--instruction` prints the orchestrator's prompt; `--check` probes every
 * remote agent at once and shows its health. While a node serves the data
 * folder, its owner-only `/node/agents` says the same of that node.
 */
export function registerAgentsCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('agents')
    .description('show the agent tree: agents, descriptions, tools, unmatched tools')
    .option('--json', 'print JSON')
    .option('--instruction', "print the root agent's instruction")
    .option('--format <format>', 'text (default), or a picture of the tree and federation: mermaid, dot, svg')
    .option(
      '--check',
      'probe each remote agent now and show its health: healthy, down, open circuit, skipped with reason, last error, latency',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  lango agents\n  lango agents --check        exit 1 when a remote agent is unusable\n  lango agents --json\n  lango agents --format mermaid\n  lango agents --format dot | dot -Tsvg > agents.svg\n',
    )
    .action(async (options: AgentsOptions) => {
      pictureOf(options.format);
      const globals = program.opts<GlobalOptions>();
      const { config } = configFor(globals, ctx);
      const target = await targetFor(globals, config, ctx, { command: 'agents', runJobs: false });
      if (target.kind === 'remote') {
        const path = `node/agents${options.check ? '?probe=1' : ''}`;
        const answer = await fetchNodeReport<AgentsReport>(target.url, path, target.owner);
        done(
          answer.ok ? print(answer.report, options, ctx) : await catalogAgents(target.url, answer.why, options, ctx.io),
        );
        return;
      }
      try {
        done(print(await agentsReport(target.app.info, { probe: options.check }), options, ctx));
      } finally {
        await target.close();
      }
    });
}

/**
 * `agents` against a node that shows this caller only its public catalog
 * (`GET /agents`, what its grant offers): agents, capabilities and remote
 * health, but not tools or prompts.
 */
async function catalogAgents(url: string, why: string, options: AgentsOptions, io: CliIO): Promise<number> {
  if (options.instruction)
    throw new InputError(`--instruction needs the node's owner, and the node at ${url} refused (${why})`);
  const picture = pictureOf(options.format);
  const { status, body } = await fetchNodeJson(url, 'agents');
  if (status !== 200) throw new LangoError(`the node at ${url} answered /agents with HTTP ${status}`);
  const catalog = body as { root: string; agents: AgentEntry[] };
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
