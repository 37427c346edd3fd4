import type { Command } from 'commander';
import type { Agent } from '../../agent/agent';
import type { PeerStatus } from '../../federation/health';
import type { FamilyStatus, LangoConfig } from '../../index';
import type { AgentEntry } from '../../a2a/discovery';
import { InputError, LangoError } from '../../errors';
import { ExitCode, type CliIO } from '../io';
import { configFor, targetFor, type CliContext, type GlobalOptions } from '../context';
import { fetchNodeJson } from '../nodeClient';
import { agentGraph, toDot, toMermaid, toSvg, type AgentGraph } from '../../observe/graph';

/** `--format` pictures of the tree and federation. */
const PICTURES = { mermaid: toMermaid, dot: toDot, svg: toSvg } as const;
type PictureFormat = keyof typeof PICTURES;

/** The picture renderer `--format` names; undefined for the plain listing. */
function pictureOf(format: string | undefined): ((graph: AgentGraph) => string) | undefined {
  if (format === undefined || format === 'text') return undefined;
  if (format in PICTURES) return PICTURES[format as PictureFormat];
  throw new InputError(`--format must be text, mermaid, dot or svg (got "${format}")`);
}

/** The JSON shape of one agent in `lango agents --json`. */
interface AgentView {
  name: string;
  kind: 'llm' | 'remote';
  description: string;
  tools: string[];
  cardUrl?: string;
  subAgents: AgentView[];
}

function view(agent: Agent): AgentView {
  if (agent.kind === 'remote') {
    return {
      name: agent.name,
      kind: 'remote',
      description: agent.description,
      tools: [],
      cardUrl: agent.cardUrl,
      subAgents: [],
    };
  }
  return {
    name: agent.name,
    kind: 'llm',
    description: agent.description,
    tools: agent.tools.map((t) => t.name),
    subAgents: agent.subAgents.map(view),
  };
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

/** Remote agents the configuration lists but the node does not use because A2A is off. */
function unservedRemotes(config: LangoConfig): number {
  return config.a2a.enabled ? 0 : config.a2a.remoteAgents.filter((entry) => entry.enabled).length;
}

/** `lango agents`: the agent tree, its tools and unmatched tools; `--instruction` prints the orchestrator's prompt. */
export function registerAgentsCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('agents')
    .description('show the agent tree: agents, descriptions, tools, unmatched tools')
    .option('--json', 'print JSON')
    .option('--instruction', "print the root agent's instruction")
    .option('--format <format>', 'text (default), or a picture of the tree and federation: mermaid, dot, svg')
    .option(
      '--check',
      "show each remote agent's health: healthy, open circuit, skipped with reason, last error, latency",
    )
    .addHelpText(
      'after',
      '\nExamples:\n  lango agents\n  lango agents --check        exit 1 when a remote agent is unusable\n  lango agents --json\n  lango agents --format mermaid\n  lango agents --format dot | dot -Tsvg > agents.svg\n',
    )
    .action(async (options: { json?: boolean; instruction?: boolean; check?: boolean; format?: string }) => {
      const picture = pictureOf(options.format);
      const globals = program.opts<GlobalOptions>();
      const { config } = configFor(globals, ctx);
      const target = await targetFor(globals, config, ctx, { command: 'agents', runJobs: false });
      if (target.kind === 'remote') {
        done(await remoteAgents(target.url, options, ctx.io, picture));
        return;
      }
      const { app } = target;
      try {
        const root = app.root();
        const peers = app.peers();
        if (options.instruction) {
          ctx.io.out(root.instruction + '\n');
        } else if (picture) {
          ctx.io.out(picture(agentGraph(root, peers)));
        } else if (options.json) {
          const report = {
            root: view(root),
            unmatchedTools: app.unmatchedTools(),
            missingFamilies: app.families.filter((f) => f.state !== 'on'),
            ...(options.check ? { remoteAgents: peers } : {}),
          };
          ctx.io.out(JSON.stringify(report, null, 2) + '\n');
        } else {
          const lines: string[] = [];
          render(view(root), 0, lines);
          const unmatched = app.unmatchedTools();
          lines.push(`unmatched tools: ${unmatched.length ? unmatched.join(', ') : 'none'}`);
          lines.push(...renderMissing(app.families));
          if (options.check) lines.push(...renderPeers(peers));
          ctx.io.out(lines.join('\n') + '\n');
        }
        // --check is a health probe: exit 1 when a configured remote agent is unusable, served or not.
        const unhealthy = peers.some((p) => p.state !== 'healthy') || unservedRemotes(config) > 0;
        if (options.check && unservedRemotes(config) > 0)
          ctx.io.err(
            `lango: ${unservedRemotes(config)} remote agent(s) configured, but a2a.enabled is false: none is used\n`,
          );
        done(options.check && unhealthy ? ExitCode.failure : ExitCode.ok);
      } finally {
        await target.close();
      }
    });
}

/**
 * `agents` against the running node: its catalog (`GET /agents`), which
 * names agents, capabilities and remote health but, being served to callers,
 * not tools or prompts.
 */
async function remoteAgents(
  url: string,
  options: { json?: boolean; instruction?: boolean; check?: boolean },
  io: CliIO,
  picture?: (graph: AgentGraph) => string,
): Promise<number> {
  if (options.instruction)
    throw new InputError(`--instruction reads the tree in-process, but the node at ${url} serves this data folder`);
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
    const lines = [`${catalog.root} (node at ${url})`];
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
