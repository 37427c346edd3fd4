import { loadConfig, type LoadedConfig } from '../config/load';
import type { LangoConfig } from '../config/schema';
import { createApp, type LangoApp } from '../app';
import { SecretRegistry } from '../log/redact';
import { createWinstonLogger } from '../log/winston';
import { reservedAgentNames } from '../index';
import type { CliIO } from './io';

/** Options every command accepts. */
export interface GlobalOptions {
  config?: string;
}

/** What a command runs with: injected so the CLI can be driven in-process by tests. */
export interface CliContext {
  io: CliIO;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM); `serve` waits on it. */
  stopSignal: Promise<void>;
}

/** Loads the configuration for a command (throws ConfigError → exit 2); no remote may take a local agent's name. */
export function configFor(options: GlobalOptions, ctx: CliContext): LoadedConfig {
  return loadConfig({ path: options.config, env: ctx.env, cwd: ctx.cwd, reservedAgentNames: reservedAgentNames() });
}

/**
 * Builds the node for a one-shot command. Its log goes to stderr at `warn`
 * unless LOG_LEVEL says otherwise, so stdout carries only the command's output.
 */
export async function appFor(config: LangoConfig, ctx: CliContext, level?: string): Promise<LangoApp> {
  const secrets = new SecretRegistry();
  const logger = createWinstonLogger({
    level: level ?? (ctx.env.LOG_LEVEL ? config.logLevel : 'warn'),
    pretty: Boolean(process.stderr.isTTY),
    secrets,
  });
  return createApp(config, { logger, secrets, cwd: ctx.cwd });
}
