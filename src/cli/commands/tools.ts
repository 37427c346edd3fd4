import type { Command } from 'commander';
import { InputError } from '../../errors';
import { toolFields, type OwnedTool } from '../../index';
import { ExitCode } from '../io';
import { configFor, targetFor, type CliContext, type GlobalOptions } from '../context';

/** The JSON shape of one tool in `lango tools --json`. */
function view({ tool, owner }: OwnedTool) {
  return { name: tool.name, owner: owner ?? null, description: tool.description, arguments: toolFields(tool) };
}

/** A tool as a person reads it: name, owner, description, one line per argument. */
function render(owned: OwnedTool, rootName: string): string[] {
  const { name, owner, description, arguments: fields } = view(owned);
  const lines = [`${name}  → ${owner ?? (rootName === 'lango-agent' ? rootName : 'unmatched')}`];
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

/**
 * `lango tools [NAME]`: each tool of the node with the specialist it lands
 * with, its description and its arguments, so a person (or the offline
 * model's user) can write a call without reading the source.
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
      if (target.kind === 'remote')
        // Opening the folder beside its node would mark the node's running background commands lost.
        throw new InputError(
          `lango tools reads the tools in-process, but the node at ${target.url} serves this data folder; stop it first`,
        );
      const { app } = target;
      try {
        const all = app.tools();
        const chosen = name === undefined ? all : all.filter(({ tool }) => tool.name === name);
        if (name !== undefined && !chosen.length) {
          const near = all.map(({ tool }) => tool.name).filter((n) => n.startsWith(name.split('_')[0] ?? name));
          throw new InputError(
            `no tool named "${name}"${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}; \`lango tools\` lists them`,
          );
        }
        if (options.json) ctx.io.out(JSON.stringify(chosen.map(view), null, 2) + '\n');
        else ctx.io.out(chosen.flatMap((owned) => [...render(owned, app.root().name), '']).join('\n'));
        done(ExitCode.ok);
      } finally {
        await target.close();
      }
    });
}
