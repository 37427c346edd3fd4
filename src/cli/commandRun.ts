import type { CliContext, GlobalOptions } from './context';

/**
 * The contract between the command table (`commandTable.ts`) and each
 * command's module: what an action runs with and what it gives back.
 */

/** What a command's action runs with. */
export interface CommandRun {
  ctx: CliContext;
  /** The options every command takes (`--config`, `--data-dir`, `--url`, `--token`). */
  globals: GlobalOptions;
  /** The command's arguments, in the order the row declares them. */
  args: unknown[];
  /** The command's own options, by commander's camel-cased names. */
  options: Record<string, unknown>;
}

/** A command's action: resolves with the exit code (0 ok, 1 failure); bad input throws (exit 2). */
export type CommandAction = (run: CommandRun) => Promise<number>;
