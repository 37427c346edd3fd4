import type { Command } from 'commander';
import { ExitCode } from '../io';
import { appFor, configFor, type CliContext, type GlobalOptions } from '../context';

/**
 * `lango serve`: the node on `server.host:server.port` until SIGINT/SIGTERM.
 * A failed listen closes everything and ends with exit code 1 and one line;
 * while serving, an unhandled rejection is logged and does not end the process.
 */
export function registerServeCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('serve')
    .description('serve the agent card and the A2A protocol')
    .action(async () => {
      const { config, file } = configFor(program.opts<GlobalOptions>(), ctx);
      const app = await appFor(config, ctx, config.logLevel);
      const log = app.logger.child({ component: 'cli' });
      let url: string;
      try {
        url = await app.listen();
      } catch (err) {
        // Nothing may outlive a failed start: the database, tools, peers and timers close before the error is told.
        await app.close();
        throw err;
      }
      log.info('lango node listening', {
        url,
        card: `${url}/.well-known/agent-card.json`,
        provider: config.agent.provider,
        config: file ?? 'embedded defaults',
        agents: app.root().subAgents.map((a) => a.name),
      });
      // Last line of defence: a rejection nobody handled (a defect) is logged, never the end of a node strangers use.
      const onRejection = (reason: unknown) =>
        log.error('unhandled rejection (a defect; the node keeps serving)', {
          error: reason instanceof Error ? reason.message : String(reason),
        });
      process.on('unhandledRejection', onRejection);
      try {
        await ctx.stopSignal;
        log.info('stopping');
        await app.close();
      } finally {
        process.off('unhandledRejection', onRejection);
      }
      done(ExitCode.ok);
    });
}
