import type { Command } from 'commander';
import { ExitCode } from '../io';
import { appFor, configFor, type CliContext, type GlobalOptions } from '../context';
import { checkCommandSandbox, describeSandbox } from '../../index';

/** `lango doctor`: each tool family on, off or broken (with the reason), and the model provider. */
export function registerDoctorCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('doctor')
    .description('report each tool family as on, off or broken, with the reason')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { config, file } = configFor(program.opts<GlobalOptions>(), ctx);
      const app = await appFor(config, ctx, 'error');
      try {
        const broken = app.families.filter((f) => f.state === 'broken');
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
                `${f.state.padEnd(6)} ${f.name.padEnd(12)} → ${f.agent.padEnd(10)} ` +
                (f.state === 'on' ? `${f.tools.length} tools` : f.state === 'broken' ? f.reason : 'disabled by config'),
            ),
          ];
          ctx.io.out(lines.join('\n') + '\n');
        }
        done(broken.length ? ExitCode.failure : ExitCode.ok);
      } finally {
        await app.close();
      }
    });
}
