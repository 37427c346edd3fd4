import type { Command } from 'commander';
import { ExitCode } from '../io';
import { configFor, targetFor, type CliContext, type GlobalOptions } from '../context';
import { describeHolder } from '../dataLock';
import { fetchNodeJson } from '../nodeClient';
import { checkCommandSandbox, describeSandbox } from '../../index';

/**
 * `lango doctor`: each tool family on, off or broken (with the reason), and
 * the model provider. Exit 1 when something the configuration asks for is
 * broken; a family that is merely unavailable on this machine without being
 * asked for (no browser, no executablePath set) is a warning and exits 0.
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
        // The node holds the folder: its families are its own; say where it runs and whether it is ready.
        const { status, body } = await fetchNodeJson(target.url, 'readyz');
        const who = target.holder ? describeHolder(target.holder) : `the node at ${target.url}`;
        if (options.json)
          ctx.io.out(JSON.stringify({ config: file ?? null, node: target.url, readiness: body }) + '\n');
        else
          ctx.io.out(
            `config: ${file ?? 'embedded defaults'}\nnode: ${who}: ${status === 200 ? 'ready' : 'not ready'}\n`,
          );
        done(status === 200 ? ExitCode.ok : ExitCode.failure);
        return;
      }
      const { app } = target;
      try {
        const broken = app.families.filter((f) => f.state === 'broken' && !f.optional);
        const sandbox = await checkCommandSandbox(config, app.dataDir);
        if (options.json) {
          const report = { config: file ?? null, provider: config.agent.provider, sandbox, families: app.families };
          ctx.io.out(JSON.stringify(report, null, 2) + '\n');
        } else {
          const lines = [
            `config: ${file ?? 'embedded defaults'}`,
            `model: ${config.agent.provider}${config.agent.provider === 'openai' ? ` (${config.agent.model})` : ''}`,
            `data: ${app.dataDir}`,
            `sandbox: ${describeSandbox(sandbox)}`,
            ...app.families.map(
              (f) =>
                `${(f.optional ? 'warn' : f.state).padEnd(6)} ${f.name.padEnd(12)} → ${f.agent.padEnd(10)} ` +
                (f.state === 'on' ? `${f.tools.length} tools` : f.state === 'broken' ? f.reason : 'disabled by config'),
            ),
          ];
          if (broken.length) lines.push(`broken: ${broken.map((f) => f.name).join(', ')} (configured but unusable)`);
          ctx.io.out(lines.join('\n') + '\n');
        }
        done(broken.length ? ExitCode.failure : ExitCode.ok);
      } finally {
        await target.close();
      }
    });
}
