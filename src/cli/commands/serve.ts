import { ExitCode } from '../io';
import { configFor, nodeLogging } from '../context';
import type { CommandRun } from '../commandRun';
import { notReadNote, startBanner } from '../banner';

/**
 * `lango serve`: the node on `server.host:server.port` until SIGINT/SIGTERM
 * (`serveNode`). It holds its data folder's lock and records its URL there,
 * so other commands on the folder talk to it (a second `serve` exits 2
 * naming it), and writes the local owner token its user's CLI signs in
 * with. A failed listen closes everything and ends with exit code 1 and one
 * line; while serving, an unhandled rejection is logged and does not end the
 * process. On a terminal it starts with a short banner, piped with a JSON
 * log line.
 */
export async function serve({ ctx, globals }: CommandRun): Promise<number> {
  const { config, file, notRead } = await configFor(globals, ctx);
  const [{ serveNode }, { routeConsoleToLogger }, logging] = await Promise.all([
    import('../../serve/serveNode'),
    import('../consoleToLog'),
    nodeLogging(config, ctx, config.logLevel),
  ]);
  const node = await serveNode(config, { ...logging, cwd: ctx.cwd, runJobs: true });
  const { app, url } = node;
  const log = app.logger.child({ component: 'cli' });
  if (ctx.logTerminal) {
    const name = config.a2a.agentName ?? app.root().name;
    ctx.io.err(
      startBanner({
        config,
        url,
        file,
        notRead,
        dataDir: app.dataDir,
        ownerTokenFile: node.ownerTokenFile,
        name,
        cwd: ctx.cwd,
      }),
    );
  } else {
    log.info('lango node listening', {
      url,
      card: `${url}/.well-known/agent-card.json`,
      ...(config.observability.console ? { console: `${url}/console` } : {}),
      provider: config.agent.provider,
      config: file ?? 'embedded defaults',
      ...(notRead ? { configNotRead: notReadNote(notRead) } : {}),
      dataDir: app.dataDir,
      agents: app.root().subAgents.map((a) => a.name),
    });
  }
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
  } finally {
    try {
      await node.close();
    } finally {
      process.off('unhandledRejection', onRejection);
      restoreConsole();
    }
  }
  return ExitCode.ok;
}
