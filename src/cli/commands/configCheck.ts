import path from 'node:path';
import { clusterSettings, clusterWarnings, describeStorageUrl } from '../../config/cluster';
import { ExitCode } from '../io';
import { configFor } from '../context';
import { notReadNote } from '../banner';
import type { CommandRun } from '../commandRun';

/**
 * `lango config check`: validates the configuration and says where it came
 * from; with `storage.url`, names the replica and warns (stderr) about
 * folders every replica must share.
 */
export async function configCheck({ ctx, globals }: CommandRun): Promise<number> {
  const { config: loaded, file, notRead } = await configFor(globals, ctx);
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
  return ExitCode.ok;
}
