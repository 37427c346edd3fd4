#!/usr/bin/env node
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { ExitCode, processIO, reportError, type CliIO } from './io';
import { printableIO } from './printable';
import type { CliContext } from './context';
import { registerCommands } from './commandTable';

/** Options for {@link runCli}; the process's own streams, environment and signals by default. */
export interface RunCliOptions {
  io?: CliIO;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  stopSignal?: Promise<void>;
  /** Keyboard input for interactive `chat` (the process's stdin). */
  stdin?: NodeJS.ReadableStream;
  /** Whether input and output are a terminal (default: the process's stdin and stdout both are). */
  terminal?: boolean;
  /** Whether stderr, where the node logs, is a terminal (default: the process's is, when `io` is its own). */
  logTerminal?: boolean;
}

/**
 * Runs the `lango` CLI and resolves with its exit code: 0 ok, 2 bad input or
 * configuration, 1 failure. Never throws and never prints a stack trace.
 */
export async function runCli(argv: string[], options: RunCliOptions = {}): Promise<number> {
  // Every byte the commands print passes the output edge: no control sequence from a node or peer reaches the terminal.
  const terminalIO = options.io ?? processIO;
  const io = printableIO(terminalIO);
  const env = options.env ?? process.env;
  const signals = options.stopSignal ? undefined : listenForStop();
  const ctx: CliContext = {
    io,
    controls: (sequence) => terminalIO.out(sequence),
    env,
    cwd: options.cwd ?? process.cwd(),
    stopSignal: options.stopSignal ?? (signals as { stop: Promise<void> }).stop,
    stdin: options.stdin ?? process.stdin,
    terminal: options.terminal ?? Boolean(!options.io && process.stdin.isTTY && process.stdout.isTTY),
    logTerminal: options.logTerminal ?? Boolean(!options.io && process.stderr.isTTY),
  };
  let exitCode: number = ExitCode.ok;
  const done = (code: number) => {
    exitCode = code;
  };
  const program = new Command('lango')
    .description('lango: an A2A agent network node')
    .option('-c, --config <path>', 'configuration file (else $LANGO_CONFIG, else ./lango.config.{yaml,json})')
    .option('--data-dir <dir>', "the data folder (else $LANGO_DATA_DIR, else the configuration's dataDir)")
    .option('--url <url>', 'talk to the node at this A2A base URL instead of the one serving the data folder')
    .option(
      '--token <token>',
      'the bearer token to present (else $LANGO_TOKEN; the node serving this folder: its local owner token)',
    )
    .addHelpText('after', ROOT_EXAMPLES)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError(false);
  registerCommands(program, ctx, done);
  addVersion(program, packageVersion());
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are successes; every other commander error is bad input, already printed.
      return err.exitCode === 0 ? ExitCode.ok : ExitCode.badInput;
    }
    return reportError(err, io, Boolean(env.LANGO_DEBUG));
  } finally {
    // The command is over: a signal from now on has its default effect and ends the process.
    signals?.release();
  }
}

const ROOT_EXAMPLES = `
One node per data folder: \`serve\` holds it; the other commands talk to that node
over A2A while it runs (or to --url), else run the node in this process.

Examples:
  lango serve                       the node, on server.host:server.port
  lango chat                        talk to it (another terminal); Ctrl-C cancels a turn
  lango chat "what can you do?"     one message
  lango agents --check              the agent tree and remote agents' health
  lango --url http://127.0.0.1:18789 card
  lango --data-dir ./node-b serve   a second node on its own folder (LANGO_DATA_DIR works too)
  lango init my-node                a project with a config, a custom tool and its test
  lango <command> --help            each command's options and examples
`;

/** \`--version\` (and \`-V\`) on the program and every command under it. */
function addVersion(command: Command, version: string): void {
  command.version(version, '-V, --version', 'print the lango version');
  for (const sub of command.commands) addVersion(sub, version);
}

/** The version in the package's manifest (beside \`src/\` and \`dist/\` alike). */
function packageVersion(): string {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof manifest.version === 'string' ? manifest.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * The first SIGINT or SIGTERM asks the running command to stop (`serve`
 * closes the node); a second one ends the process at once, so a shutdown
 * that hangs never keeps it alive.
 */
function listenForStop(): { stop: Promise<void>; release: () => void } {
  let requested: () => void = () => {};
  const stop = new Promise<void>((resolve) => (requested = resolve));
  let received = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    received += 1;
    if (received === 1) requested();
    else process.exit(128 + (os.constants.signals[signal] ?? 15));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    stop,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** How long the process may take to drain after the command ended before it exits anyway (a leaked handle). */
const EXIT_DRAIN_MS = 3000;

if (require.main === module) {
  // A reader that stops early (`lango --help | head`) closes the pipe: the output is over, not a failure to report.
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      else process.exit(ExitCode.failure);
    });
  void runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
    // Normally nothing is left and the process ends now; if something still holds it, it ends anyway.
    setTimeout(() => process.exit(code), EXIT_DRAIN_MS).unref();
  });
}
