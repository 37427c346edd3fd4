import path from 'node:path';
import { loadConfig, type LoadedConfig } from '../config/load';
import type { LangoConfig } from '../config/schema';
import { createApp, type LangoApp } from '../app';
import { SecretRegistry } from '../log/redact';
import { createWinstonLogger } from '../log/winston';
import { reservedAgentNames } from '../index';
import { acquireDataLock, DataFolderBusyError, readDataLock, type DataLock, type LockHolder } from './dataLock';
import type { CliIO } from './io';

/** Options every command accepts. */
export interface GlobalOptions {
  config?: string;
  /** The data folder (`--data-dir`): wins over `LANGO_DATA_DIR` and the configuration's `dataDir`. */
  dataDir?: string;
  /** Talk to the node at this A2A base URL instead of the one serving the data folder. */
  url?: string;
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
}

/** Loads the configuration for a command (throws ConfigError → exit 2); no remote may take a local agent's name. */
export function configFor(options: GlobalOptions, ctx: CliContext): LoadedConfig {
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
  const secrets = new SecretRegistry();
  const logger = createWinstonLogger({
    level: options.level ?? (ctx.env.LOG_LEVEL ? config.logLevel : 'warn'),
    pretty: Boolean(process.stderr.isTTY),
    secrets,
  });
  return createApp(config, { logger, secrets, cwd: ctx.cwd, runJobs: options.runJobs });
}

/**
 * Where a command's requests go: the node serving the data folder (or
 * `--url`), or a node built here. `owner` is the owner's credential as
 * headers, sent only to the node serving this folder (never to `--url`).
 */
export type NodeTarget =
  | { kind: 'remote'; url: string; holder?: LockHolder; owner: Record<string, string> }
  | { kind: 'local'; app: LangoApp; lock: DataLock; close: () => Promise<void> };

/** How long a command waits for a `serve` that holds the folder but is not listening yet. */
const SERVE_STARTING_MS = 15_000;

/**
 * One node per data folder: with `--url`, or when a `serve` holds the
 * folder, the command talks to that node over A2A; otherwise it builds the
 * node here, holding the folder's lock until `close`. Another command
 * holding the folder (an in-process `chat`) makes it exit 2 naming it.
 */
export async function targetFor(
  options: GlobalOptions,
  config: LangoConfig,
  ctx: CliContext,
  local: { command: string; runJobs: boolean; level?: string },
): Promise<NodeTarget> {
  if (options.url) return { kind: 'remote', url: options.url.replace(/\/+$/, ''), owner: {} };
  const dataDir = dataDirOf(config, ctx);
  let holder = readDataLock(dataDir);
  if (holder?.command === 'serve' && !holder.url) holder = await servingHolder(dataDir);
  if (holder?.url) return { kind: 'remote', url: holder.url, holder, owner: ownerCredential(config) };
  if (holder) throw new DataFolderBusyError(dataDir, holder);
  const lock = acquireDataLock(dataDir, local.command);
  try {
    const app = await appFor(config, ctx, local);
    return {
      kind: 'local',
      app,
      lock,
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
 * which the CLI does not open). None configured: no headers, and the node
 * takes a loopback caller for its owner when it has no auth.
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
