import type { Command } from 'commander';
import type { Agent } from '../../agent/agent';
import { ExitCode } from '../io';
import { appFor, configFor, type CliContext, type GlobalOptions } from '../context';

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
    return { name: agent.name, kind: 'remote', description: agent.description, tools: [], cardUrl: agent.cardUrl, subAgents: [] };
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

/** `lango agents`: the agent tree, its tools and unmatched tools; `--instruction` prints the orchestrator's prompt. */
export function registerAgentsCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('agents')
    .description('show the agent tree: agents, descriptions, tools, unmatched tools')
    .option('--json', 'print JSON')
    .option('--instruction', "print the root agent's instruction")
    .action(async (options: { json?: boolean; instruction?: boolean }) => {
      const { config } = configFor(program.opts<GlobalOptions>(), ctx);
      const app = await appFor(config, ctx);
      try {
        const root = app.root();
        if (options.instruction) {
          ctx.io.out(root.instruction + '\n');
        } else if (options.json) {
          ctx.io.out(JSON.stringify({ root: view(root), unmatchedTools: app.unmatchedTools() }, null, 2) + '\n');
        } else {
          const lines: string[] = [];
          render(view(root), 0, lines);
          const unmatched = app.unmatchedTools();
          lines.push(`unmatched tools: ${unmatched.length ? unmatched.join(', ') : 'none'}`);
          ctx.io.out(lines.join('\n') + '\n');
        }
        done(ExitCode.ok);
      } finally {
        await app.close();
      }
    });
}
