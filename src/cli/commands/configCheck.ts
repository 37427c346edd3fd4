import type { Command } from 'commander';
import { ExitCode } from '../io';
import { configFor, type CliContext, type GlobalOptions } from '../context';

/** `lango config check`: validates the configuration and says where it came from. */
export function registerConfigCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate the configuration (exit 2 with one line per bad key)')
    .action(() => {
      const { config: loaded, file } = configFor(program.opts<GlobalOptions>(), ctx);
      ctx.io.out(
        `configuration ok (${file ?? 'embedded defaults'}): provider ${loaded.agent.provider}, ` +
          `${loaded.agent.multiAgent ? 'multi-agent' : 'single-agent'}, ${loaded.server.host}:${loaded.server.port}, ` +
          `${loaded.a2a.remoteAgents.length} remote agent(s)\n`,
      );
      done(ExitCode.ok);
    });
}
