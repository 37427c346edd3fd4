import type { Command } from 'commander';
import { ExitCode } from '../io';
import { configFor, targetFor, type CliContext, type GlobalOptions } from '../context';
import { describeHolder } from '../dataLock';
import { fetchNodeJson, fetchNodeReport } from '../nodeClient';
import { describeSandbox } from '../../index';
import { doctorReport, type DoctorReport } from '../../observe/nodeInfo';

/** Prints the report; the exit code: 1 when a family the configuration asks for is broken. */
function print(report: DoctorReport, file: string | undefined, json: boolean, ctx: CliContext): number {
  const { provider, model, dataDir, sandbox, families } = report;
  const broken = families.filter((f) => f.state === 'broken' && !f.optional);
  if (json) {
    ctx.io.out(JSON.stringify({ config: file ?? null, provider, sandbox, families }, null, 2) + '\n');
  } else {
    const lines = [
      `config: ${file ?? 'embedded defaults'}`,
      `model: ${provider}${provider === 'openai' ? ` (${model})` : ''}`,
      `data: ${dataDir}`,
      `sandbox: ${describeSandbox(sandbox)}`,
      ...families.map(
        (f) =>
          `${(f.optional || f.warning ? 'warn' : f.state).padEnd(6)} ${f.name.padEnd(12)} → ${f.agent.padEnd(10)} ` +
          (f.state === 'on'
            ? `${f.tools.length} tools${f.warning ? `; ${f.warning}` : ''}`
            : f.state === 'broken'
              ? f.reason
              : 'disabled by config'),
      ),
    ];
    if (broken.length) lines.push(`broken: ${broken.map((f) => f.name).join(', ')} (configured but unusable)`);
    ctx.io.out(lines.join('\n') + '\n');
  }
  return broken.length ? ExitCode.failure : ExitCode.ok;
}

/**
 * `lango doctor`: each tool family on, off or broken (with the reason), and
 * the model provider. Exit 1 when something the configuration asks for is
 * broken; a family that is merely unavailable on this machine without being
 * asked for (no browser, no executablePath set), or whose tools lack an
 * optional package (they answer how to install it), is a warning and exits 0.
 * While a node serves the data folder, its owner-only `/node/doctor` says
 * the same of that node.
 */
export function registerDoctorCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('doctor')
    .description('report each tool family as on, off or broken, with the reason')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const globals = program.opts<GlobalOptions>();
      const { config, file } = configFor(globals, ctx);
      const target = await targetFor(globals, config, ctx, { command: 'doctor', runJobs: false, level: 'error' });
      if (target.kind === 'remote') {
        const answer = await fetchNodeReport<DoctorReport>(target.url, 'node/doctor', target.owner);
        if (answer.ok) {
          done(print(answer.report, file, Boolean(options.json), ctx));
          return;
        }
        // Not this node's owner (or a node without the route): only whether it is ready.
        const { status, body } = await fetchNodeJson(target.url, 'readyz');
        const who = target.holder ? describeHolder(target.holder) : `the node at ${target.url}`;
        if (options.json)
          ctx.io.out(JSON.stringify({ config: file ?? null, node: target.url, readiness: body }) + '\n');
        else
          ctx.io.out(
            `config: ${file ?? 'embedded defaults'}\nnode: ${who}: ${status === 200 ? 'ready' : 'not ready'} ` +
              `(its families are shown to its owner only: ${answer.why})\n`,
          );
        done(status === 200 ? ExitCode.ok : ExitCode.failure);
        return;
      }
      try {
        done(print(await doctorReport(target.app.info), file, Boolean(options.json), ctx));
      } finally {
        await target.close();
      }
    });
}
