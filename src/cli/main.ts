#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { ExitCode, processIO, reportError, type CliIO } from './io';
import type { CliContext } from './context';
import { registerAgentsCommand } from './commands/agents';
import { registerCardCommand } from './commands/card';
import { registerChatCommand } from './commands/chat';
import { registerConfigCommand } from './commands/configCheck';
import { registerDoctorCommand } from './commands/doctor';
import { registerServeCommand } from './commands/serve';

/** Options for {@link runCli}; the process's own streams, environment and signals by default. */
export interface RunCliOptions {
  io?: CliIO;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  stopSignal?: Promise<void>;
}

/**
 * Runs the `lango` CLI and resolves with its exit code: 0 ok, 2 bad input or
 * configuration, 1 failure. Never throws and never prints a stack trace.
 */
export async function runCli(argv: string[], options: RunCliOptions = {}): Promise<number> {
  const io = options.io ?? processIO;
  const env = options.env ?? process.env;
  const ctx: CliContext = {
    io,
    env,
    cwd: options.cwd ?? process.cwd(),
    stopSignal: options.stopSignal ?? stopRequested(),
  };
  let exitCode: number = ExitCode.ok;
  const done = (code: number) => {
    exitCode = code;
  };
  const program = new Command('lango')
    .description('lango: an A2A agent network node')
    .option('-c, --config <path>', 'configuration file (else $LANGO_CONFIG, else ./lango.config.{yaml,json})')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError(false);
  registerServeCommand(program, ctx, done);
  registerChatCommand(program, ctx, done);
  registerAgentsCommand(program, ctx, done);
  registerCardCommand(program, ctx, done);
  registerConfigCommand(program, ctx, done);
  registerDoctorCommand(program, ctx, done);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are successes; every other commander error is bad input, already printed.
      return err.exitCode === 0 ? ExitCode.ok : ExitCode.badInput;
    }
    return reportError(err, io, Boolean(env.LANGO_DEBUG));
  }
}

function stopRequested(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

if (require.main === module) {
  void runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
