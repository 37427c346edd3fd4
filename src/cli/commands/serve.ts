import type { Command } from 'commander';
import { ExitCode } from '../io';
import { appFor, configFor, type CliContext, type GlobalOptions } from '../context';

/** `lango serve`: the node on `server.host:server.port` until SIGINT/SIGTERM. */
export function registerServeCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('serve')
    .description('serve the agent card and the A2A protocol')
    .action(async () => {
      const { config, file } = configFor(program.opts<GlobalOptions>(), ctx);
      const app = await appFor(config, ctx, config.logLevel);
      const log = app.logger.child({ component: 'cli' });
      const url = await app.listen();
      log.info('lango node listening', {
        url,
        card: `${url}/.well-known/agent-card.json`,
        provider: config.agent.provider,
        config: file ?? 'embedded defaults',
        agents: app.root().subAgents.map((a) => a.name),
      });
      await ctx.stopSignal;
      log.info('stopping');
      await app.close();
      done(ExitCode.ok);
    });
}
