import path from 'node:path';
import type { Command } from 'commander';
import { ExitCode } from '../io';
import { configFor, type CliContext, type GlobalOptions } from '../context';
import { notReadNote } from '../banner';

/**
 * `lango config check`: validates the configuration and says where it came
 * from; with `storage.url`, names the replica and warns (stderr) about
 * folders every replica must share.
 */
export function registerConfigCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate the configuration (exit 2 with one line per bad key)')
    .action(async () => {
      const { clusterSettings, clusterWarnings, describeStorageUrl } = await import('../../config/cluster');
      const { config: loaded, file, notRead } = await configFor(program.opts<GlobalOptions>(), ctx);
      if (notRead) ctx.io.err(`note: ${notReadNote(notRead)}\n`);
      const storage = loaded.storage.url
        ? `PostgreSQL ${describeStorageUrl(loaded.storage.url)} as replica ${clusterSettings(loaded).replicaId}`
        : 'SQLite';
      ctx.io.out(
        `configuration ok (${file ?? 'embedded defaults'}): provider ${loaded.agent.provider}, ` +
          `${loaded.agent.multiAgent ? 'multi-agent' : 'single-agent'}, ${loaded.server.host}:${loaded.server.port}, ` +
          `${loaded.a2a.remoteAgents.length} remote agent(s), storage ${storage}\n`,
      );
      for (const warning of clusterWarnings(loaded, path.resolve(ctx.cwd, loaded.dataDir))) {
        ctx.io.err(`warning: ${warning}\n`);
      }
      done(ExitCode.ok);
    });
}
