import { InputError, LangoError } from '../../errors';
import type { ToolsReport, ToolView } from '../../observe/nodeInfo';
import { ExitCode } from '../io';
import { targetFor, type CliContext } from '../context';
import type { CommandRun } from '../commandRun';
import { fetchNodeReport } from '../nodeHttp';
import { isToolsReport } from '../reports';

/** What a refused report asks for: the owner's credential. */
const OWNER_HINT =
  '; its tools are shown to its owner: give an owner credential with --token or LANGO_TOKEN ' +
  "(the node's local owner token is owner.token in its data folder, or a caller's with owner: true)";

/** A tool as a person reads it: name, owner, description, one line per argument. */
function render({ name, owner, description, arguments: fields }: ToolView, root: RootOf): string[] {
  const lines = [`${name}  → ${owner ?? (root.ownsEveryTool ? root.name : 'unmatched')}`];
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

/** The root agent, and whether it owns every tool (single-agent mode: no tool is unmatched). */
interface RootOf {
  name: string;
  ownsEveryTool: boolean;
}

/** The report printed: every tool, or the one named (exit 2 naming near ones when there is none). */
async function print(report: ToolsReport, name: string | undefined, json: boolean, ctx: CliContext): Promise<void> {
  const all = report.tools;
  const chosen = name === undefined ? all : all.filter((tool) => tool.name === name);
  if (name !== undefined && !chosen.length) {
    const near = all.map((tool) => tool.name).filter((n) => n.startsWith(name.split('_')[0] ?? name));
    throw new InputError(
      `no tool named "${name}"${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}; \`lango tools\` lists them`,
    );
  }
  if (json) {
    ctx.io.out(JSON.stringify(chosen, null, 2) + '\n');
    return;
  }
  const { SINGLE_AGENT_NAME } = await import('../../orchestration/tree');
  const root = { name: report.rootName, ownsEveryTool: report.rootName === SINGLE_AGENT_NAME };
  ctx.io.out(chosen.flatMap((tool) => [...render(tool, root), '']).join('\n'));
}

/**
 * `lango tools [NAME]`: each tool of the node with the specialist it lands
 * with, its description and its arguments, so a person (or the offline
 * model's user) can write a call without reading the source. While a node
 * serves the data folder, its owner-only `/node/tools` says the same.
 */
export async function tools({ ctx, globals, args, options }: CommandRun): Promise<number> {
  const name = args[0] as string | undefined;
  const target = await targetFor(globals, ctx, { command: 'tools', runJobs: false });
  if (target.kind === 'remote') {
    const answer = await fetchNodeReport<unknown>(target.url, 'node/tools', target.owner);
    if (!answer.ok)
      throw new LangoError(
        `the node at ${target.url} did not list its tools (${answer.why})` +
          (/^HTTP 40[13]\b/.test(answer.why) ? OWNER_HINT : ''),
      );
    if (!isToolsReport(answer.report))
      throw new LangoError(`the node at ${target.url} answered /node/tools with something that is not a lango report`);
    await print(answer.report, name, Boolean(options.json), ctx);
    return ExitCode.ok;
  }
  try {
    const { toolsReport } = await import('../../observe/nodeInfo');
    await print(toolsReport(target.app.info), name, Boolean(options.json), ctx);
    return ExitCode.ok;
  } finally {
    await target.close();
  }
}
