import path from 'node:path';
import { createApp, type AppDeps, type LangoApp } from '../app';
import type { LangoConfig } from '../config/schema';
import { assertSafeExposure } from '../identity/identity';
import { checkMasterKeyFile } from '../vault/masterKey';
import { acquireDataLock } from './dataLock';
import { writeOwnerToken } from './ownerToken';

/** A node serving its data folder: what `lango serve` runs, and what an embedder's `main` runs. */
export interface ServingNode {
  readonly app: LangoApp;
  /** The A2A base URL it listens on (recorded in the data folder's lock). */
  readonly url: string;
  readonly dataDir: string;
  /** The local owner token's file (`<dataDir>/owner.token`, 0600, new at each start). */
  readonly ownerTokenFile: string;
  /** Stops the node, then gives up its token and its lock. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves a node on its data folder the way `lango serve` does (issue 34, 7):
 * it holds the folder's lock (one node per data folder; the CLI in the
 * folder finds the node through it instead of building another on the same
 * files) and writes a local owner token for its user's CLI (issue 37, 5);
 * then builds the node and listens. A start that fails gives both back and
 * closes whatever it opened; a start refused by a check writes nothing.
 * @throws DataFolderBusyError (exit 2) when another node holds the folder; ConfigError when the node must not start.
 * @example
 * const { config } = loadConfig();
 * const node = await serveNode(config, { tools: [wordCount] });
 * console.log(`listening at ${node.url}`);
 * process.once('SIGTERM', () => void node.close());
 */
export async function serveNode(config: LangoConfig, deps: AppDeps = {}): Promise<ServingNode> {
  const dataDir = path.resolve(deps.cwd ?? process.cwd(), config.dataDir);
  // The checks createApp makes before any I/O, made before the lock too: a refused start leaves no file behind.
  if (config.a2a.enabled) assertSafeExposure(config);
  if (config.security.enabled) checkMasterKeyFile({ masterKey: config.security.masterKey, dataDir });
  const lock = acquireDataLock(dataDir, 'serve');
  let token: ReturnType<typeof writeOwnerToken> | undefined;
  let app: LangoApp | undefined;
  const giveBack = () => {
    token?.remove();
    lock.release();
  };
  try {
    token = writeOwnerToken(dataDir);
    app = await createApp(config, { ...deps, ownerToken: token.value });
    const url = await app.listen();
    lock.recordUrl(url);
    const started = app;
    let closing: Promise<void> | undefined;
    return {
      app: started,
      url,
      dataDir,
      ownerTokenFile: token.file,
      close: () =>
        (closing ??= (async () => {
          try {
            await started.close();
          } finally {
            giveBack();
          }
        })()),
    };
  } catch (err) {
    // Nothing may outlive a failed start: the database, tools, peers and timers close before the error is told.
    try {
      await app?.close();
    } finally {
      giveBack();
    }
    throw err;
  }
}
