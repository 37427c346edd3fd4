import type { Command } from 'commander';
import { ExitCode } from '../io';
import { appFor, configFor, dataDirOf, type CliContext, type GlobalOptions } from '../context';
import { acquireDataLock } from '../dataLock';
import { assertSafeExposure } from '../../identity/identity';
import { routeConsoleToLogger } from '../consoleToLog';

/**
 * `lango serve`: the node on `server.host:server.port` until SIGINT/SIGTERM.
 * It holds its data folder's lock and records its URL there, so other
 * commands on the folder talk to it; a second `serve` exits 2 naming it.
 * A failed listen closes everything and ends with exit code 1 and one line;
 * while serving, an unhandled rejection is logged and does not end the process.
 */
export function registerServeCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('serve')
    .description('serve the agent card and the A2A protocol')
    .addHelpText(
      'after',
      '\nExamples:\n  lango serve\n  PORT=4001 lango --data-dir ./node-b serve   a second node: its own folder and port\n',
    )
    .action(async () => {
      const { config, file } = configFor(program.opts<GlobalOptions>(), ctx);
      // A node that must not start writes nothing, not even its lock.
      if (config.a2a.enabled) assertSafeExposure(config);
      // Taken before anything opens the database: one node per data folder.
      const lock = acquireDataLock(dataDirOf(config, ctx), 'serve');
      let app: Awaited<ReturnType<typeof appFor>> | undefined;
      let url: string;
      try {
        app = await appFor(config, ctx, { level: config.logLevel, runJobs: true });
        url = await app.listen();
        lock.recordUrl(url);
      } catch (err) {
        // Nothing may outlive a failed start: the database, tools, peers and timers close before the error is told.
        await app?.close();
        lock.release();
        throw err;
      }
      const log = app.logger.child({ component: 'cli' });
      log.info('lango node listening', {
        url,
        card: `${url}/.well-known/agent-card.json`,
        ...(config.observability.console ? { console: `${url}/console` } : {}),
        provider: config.agent.provider,
        config: file ?? 'embedded defaults',
        dataDir: app.dataDir,
        agents: app.root().subAgents.map((a) => a.name),
      });
      // Last line of defence: a rejection nobody handled (a defect) is logged, never the end of a node strangers use.
      const onRejection = (reason: unknown) =>
        log.error('unhandled rejection (a defect; the node keeps serving)', {
          error: reason instanceof Error ? reason.message : String(reason),
        });
      process.on('unhandledRejection', onRejection);
      const restoreConsole = routeConsoleToLogger(app.logger.child({ component: 'library' }));
      try {
        await ctx.stopSignal;
        log.info('stopping');
        await app.close();
      } finally {
        lock.release();
        process.off('unhandledRejection', onRejection);
        restoreConsole();
      }
      done(ExitCode.ok);
    });
}
