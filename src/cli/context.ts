import path from 'node:path';
import type { LangoApp } from '../app';
import type { LoadedConfig } from '../config/load';
import type { LangoConfig } from '../config/schema';
import type { Logger } from '../log/logger';
import type { SecretRegistry } from '../log/redact';
import { acquireDataLock, DataFolderBusyError, readDataLock, type DataLock, type LockHolder } from '../serve/dataLock';
import { readOwnerToken } from '../serve/ownerToken';
import type { CliIO } from './io';
import { nodeUrl } from './nodeUrl';

/**
 * What every command runs with, and where its requests go. This module is
 * on every command's path, so it loads nothing heavy itself: the
 * configuration loader and the node are imported when a command needs them
 * (a command loads only what it uses, issue 35).
 */

/** Options every command accepts. */
export interface GlobalOptions {
  config?: string;
  /** The data folder (`--data-dir`): wins over `LANGO_DATA_DIR` and the configuration's `dataDir`. */
  dataDir?: string;
  /** Talk to the node at this A2A base URL instead of the one serving the data folder. */
  url?: string;
  /** The owner's (or a caller's) bearer token for the node (`--token`, else `LANGO_TOKEN`). */
  token?: string;
}

/** What a command runs with: injected so the CLI can be driven in-process by tests. */
export interface CliContext {
  /** Where commands print: every control character escaped visibly (`printable.ts`). */
  io: CliIO;
  /** Writes the CLI's own terminal control sequences (the spinner's) to stdout unescaped: nothing else may. */
  controls: (sequence: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM); `serve` waits on it. */
  stopSignal: Promise<void>;
  /** Keyboard input for interactive `chat` (the process's stdin by default). */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Whether stdin and stdout are a terminal: prompt, line editing, history, the spinner. */
  terminal: boolean;
  /** Whether stderr (where the node logs) is a terminal: `serve` shows a banner there instead of a JSON line. */
  logTerminal: boolean;
}

/** Loads the configuration for a command (throws ConfigError → exit 2); no remote may take a local agent's name. */
export async function configFor(options: GlobalOptions, ctx: CliContext): Promise<LoadedConfig> {
  const [{ loadConfig }, { reservedAgentNames }] = await Promise.all([
    import('../config/load'),
    import('../orchestration/tree'),
  ]);
  return loadConfig({
    path: options.config,
    dataDir: options.dataDir,
    env: ctx.env,
    cwd: ctx.cwd,
    reservedAgentNames: reservedAgentNames(),
  });
}

/** The data folder a configuration names, resolved like `createApp` resolves it. */
export function dataDirOf(config: LangoConfig, ctx: CliContext): string {
  return path.resolve(ctx.cwd, config.dataDir);
}

/**
 * Builds the node in this process. Its log goes to stderr at `warn` unless
 * LOG_LEVEL says otherwise, so stdout carries only the command's output.
 */
export async function appFor(
  config: LangoConfig,
  ctx: CliContext,
  options: { level?: string; runJobs: boolean },
): Promise<LangoApp> {
  const [{ createApp }, logging] = await Promise.all([import('../app'), nodeLogging(config, ctx, options.level)]);
  return createApp(config, { ...logging, cwd: ctx.cwd, runJobs: options.runJobs });
}

/** The node's logger and secret registry, at `level` (else `warn`, or the configuration's with LOG_LEVEL set). */
export async function nodeLogging(
  config: LangoConfig,
  ctx: CliContext,
  level?: string,
): Promise<{ logger: Logger; secrets: SecretRegistry }> {
  const [{ SecretRegistry }, { createWinstonLogger }] = await Promise.all([
    import('../log/redact'),
    import('../log/winston'),
  ]);
  const secrets = new SecretRegistry();
  const logger = createWinstonLogger({
    level: level ?? (ctx.env.LOG_LEVEL ? config.logLevel : 'warn'),
    pretty: ctx.logTerminal,
    secrets,
  });
  return { logger, secrets };
}

/**
 * Where a command's requests go: the node serving the data folder (or
 * `--url`), or a node built here. `owner` is the credential as headers:
 * `--token`/`LANGO_TOKEN` for any node; for the node serving this folder,
 * else its local owner token, else an owner credential written in the
 * configuration. `loaded` is the configuration, read unless `--url` is given.
 */
export type NodeTarget =
  | { kind: 'remote'; url: string; holder?: LockHolder; owner: Record<string, string>; loaded?: LoadedConfig }
  | { kind: 'local'; app: LangoApp; lock: DataLock; loaded: LoadedConfig; close: () => Promise<void> };

/** How long a command waits for a `serve` that holds the folder but is not listening yet. */
const SERVE_STARTING_MS = 15_000;

/**
 * One node per data folder: with `--url` (no configuration read), or when a
 * `serve` holds the folder, the command talks to that node over A2A;
 * otherwise it builds the node here, holding the folder's lock until
 * `close`. Another command holding the folder (an in-process `chat`) makes
 * it exit 2 naming it.
 */
export async function targetFor(
  options: GlobalOptions,
  ctx: CliContext,
  local: { command: string; runJobs: boolean; level?: string },
): Promise<NodeTarget> {
  const given = tokenOf(options, ctx);
  if (options.url) return { kind: 'remote', url: nodeUrl(options.url), owner: given ?? {} };
  const loaded = await configFor(options, ctx);
  const { config } = loaded;
  const dataDir = dataDirOf(config, ctx);
  let holder = readDataLock(dataDir);
  if (holder?.command === 'serve' && !holder.url) holder = await servingHolder(dataDir);
  if (holder?.url) {
    const owner = given ?? bearer(readOwnerToken(dataDir)) ?? ownerCredential(config);
    return { kind: 'remote', url: holder.url, holder, owner, loaded };
  }
  if (holder) throw new DataFolderBusyError(dataDir, holder);
  const lock = acquireDataLock(dataDir, local.command);
  try {
    const app = await appFor(config, ctx, local);
    return {
      kind: 'local',
      app,
      lock,
      loaded,
      close: async () => {
        try {
          await app.close();
        } finally {
          lock.release();
        }
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** `--token`, else `LANGO_TOKEN`, as headers; undefined when neither is given. */
function tokenOf(options: GlobalOptions, ctx: CliContext): Record<string, string> | undefined {
  return bearer(options.token ?? (ctx.env.LANGO_TOKEN || undefined));
}

function bearer(token: string | undefined): Record<string, string> | undefined {
  return token ? { authorization: `Bearer ${token}` } : undefined;
}

/** The holder of a folder whose `serve` is starting, once it records its URL (or the lock is gone: undefined). */
async function servingHolder(dataDir: string): Promise<LockHolder | undefined> {
  const deadline = Date.now() + SERVE_STARTING_MS;
  for (;;) {
    const holder = readDataLock(dataDir);
    if (!holder || holder.url || Date.now() > deadline) return holder;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The owner's credential from the configuration, as request headers: the
 * first bearer token (else API key) of a caller with `owner: true` that is
 * written in the file (a `{{secret:…}}` reference lives in the node's vault,
 * which the CLI does not open). None configured: no headers.
 */
export function ownerCredential(config: LangoConfig): Record<string, string> {
  const auth = config.a2a.auth;
  const plain = (values: readonly string[]) => values.find((value) => !value.includes('{{secret:'));
  for (const caller of auth?.callers ?? []) {
    if (!caller.owner) continue;
    const token = plain(caller.bearerTokens);
    if (token) return { authorization: `Bearer ${token}` };
    const key = plain(caller.apiKeys);
    if (key) return { [auth?.apiKeyHeader ?? 'X-API-Key']: key };
  }
  return {};
}
