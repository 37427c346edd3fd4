import type { Command } from 'commander';
import { InputError, LangoError } from '../../errors';
import { ownsEveryTool, toolsReport, type ToolsReport, type ToolView } from '../../observe/nodeInfo';
import { ExitCode } from '../io';
import { configFor, targetFor, type CliContext, type GlobalOptions } from '../context';
import { fetchNodeReport } from '../nodeClient';

/** A tool as a person reads it: name, owner, description, one line per argument. */
function render({ name, owner, description, arguments: fields }: ToolView, rootName: string): string[] {
  const lines = [`${name}  → ${owner ?? (ownsEveryTool(rootName) ? rootName : 'unmatched')}`];
  for (const line of description.split('\n')) lines.push(`  ${line}`);
  if (!fields.length) lines.push('  arguments: none');
  else {
    lines.push('  arguments:');
    for (const f of fields) {
      const about = f.description ? `  ${f.description}` : '';
      lines.push(`    ${f.name} (${f.required ? 'required' : 'optional'}, ${f.type})${about}`);
    }
  }
  return lines;
}

/** The report printed: every tool, or the one named (exit 2 naming near ones when there is none). */
function print(report: ToolsReport, name: string | undefined, json: boolean, ctx: CliContext): void {
  const all = report.tools;
  const chosen = name === undefined ? all : all.filter((tool) => tool.name === name);
  if (name !== undefined && !chosen.length) {
    const near = all.map((tool) => tool.name).filter((n) => n.startsWith(name.split('_')[0] ?? name));
    throw new InputError(
      `no tool named "${name}"${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}; \`lango tools\` lists them`,
    );
  }
  if (json) ctx.io.out(JSON.stringify(chosen, null, 2) + '\n');
  else ctx.io.out(chosen.flatMap((tool) => [...render(tool, report.rootName), '']).join('\n'));
}

/**
 * `lango tools [NAME]`: each tool of the node with the specialist it lands
 * with, its description and its arguments, so a person (or the offline
 * model's user) can write a call without reading the source. While a node
 * serves the data folder, its owner-only `/node/tools` says the same.
 */
export function registerToolsCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('tools')
    .description("list the node's tools: owner, description and arguments (one tool with NAME)")
    .argument('[name]', 'show only this tool')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExamples:\n  lango tools\n  lango tools crypto_hash\n  lango tools --json')
    .action(async (name: string | undefined, options: { json?: boolean }) => {
      const globals = program.opts<GlobalOptions>();
      const { config } = configFor(globals, ctx);
      const target = await targetFor(globals, config, ctx, { command: 'tools', runJobs: false });
      if (target.kind === 'remote') {
        const answer = await fetchNodeReport<ToolsReport>(target.url, 'node/tools', target.owner);
        if (!answer.ok) throw new LangoError(`the node at ${target.url} did not list its tools (${answer.why})`);
        print(answer.report, name, Boolean(options.json), ctx);
        done(ExitCode.ok);
        return;
      }
      try {
        print(toolsReport(target.app.info), name, Boolean(options.json), ctx);
        done(ExitCode.ok);
      } finally {
        await target.close();
      }
    });
}
