import { errorMessage, ConfigError, InputError, LangoError } from '../errors';

/** Exit codes of the `lango` CLI. */
export const ExitCode = { ok: 0, failure: 1, badInput: 2 } as const;

/** Where CLI output goes; injected so tests can capture it. */
export interface CliIO {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** Writes to the process's stdout and stderr. */
export const processIO: CliIO = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/**
 * Turns an error into what a person reads and the exit code: bad config or
 * input → 2 with one line per problem; anything else → 1 with its message,
 * never a stack trace (set LANGO_DEBUG=1 to see one).
 */
export function reportError(err: unknown, io: CliIO, debug = false): number {
  if (err instanceof ConfigError) {
    io.err(`lango: ${err.message}\n`);
    for (const line of err.issues) io.err(`  ${line}\n`);
    return ExitCode.badInput;
  }
  if (err instanceof InputError) {
    io.err(`lango: ${err.message}\n`);
    return ExitCode.badInput;
  }
  const message = errorMessage(err);
  io.err(`lango: ${err instanceof LangoError ? '' : 'failed: '}${message}\n`);
  if (debug && err instanceof Error && err.stack) io.err(err.stack + '\n');
  return ExitCode.failure;
}
