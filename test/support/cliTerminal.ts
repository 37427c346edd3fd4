import { CLI_MAIN } from './cliProcess';
import { TmuxTerminal } from './tmux';

/**
 * The built `lango` in real terminals (tmux), as a person runs it from the
 * README: one pane per command, its screen and exit status read back.
 */

/** `lango ARGS` as a shell command line in `cwd` with `env` (HOME is the folder, logs at error unless given). */
export function langoCommand(args: string, cwd: string, env: Record<string, string> = {}): string {
  const vars = Object.entries({ HOME: cwd, LOG_LEVEL: 'error', ...env })
    .map(([name, value]) => `${name}=${shellQuote(value)}`)
    .join(' ');
  return `env ${vars} ${process.execPath} ${CLI_MAIN} ${args}`;
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]*$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** What a terminal shows of `text`: capture-pane drops trailing spaces and the final newline. */
export const asShown = (text: string): string =>
  text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trimEnd();

/** Terminals opened by a test, closed together. */
export class Terminals {
  private readonly open: TmuxTerminal[] = [];

  /** A terminal running `command` in `cwd`. */
  start(command: string, cwd: string): TmuxTerminal {
    const terminal = new TmuxTerminal(command, cwd);
    this.open.push(terminal);
    return terminal;
  }

  /** Runs `lango ARGS` in a terminal of its own until it exits: what it showed and its exit status. */
  async run(args: string, cwd: string, env: Record<string, string> = {}): Promise<{ screen: string; code: number }> {
    const terminal = this.start(langoCommand(args, cwd, env), cwd);
    const code = await terminal.exitStatus();
    // tmux marks the exited pane with a line of its own: the command's output is what comes before it.
    const screen = asShown(terminal.screen().split(/\nPane is dead/)[0]!);
    this.close(terminal);
    return { screen, code };
  }

  /**
   * `lango [GLOBALS] serve` in a terminal: resolves once its banner names the URL.
   * `stop()` presses Ctrl-C and resolves with the exit status.
   */
  async serve(
    cwd: string,
    env: Record<string, string> = {},
    globals = '',
  ): Promise<{ url: string; terminal: TmuxTerminal; stop: () => Promise<number> }> {
    const terminal = this.start(langoCommand(`${globals} serve`.trim(), cwd, { PORT: '0', ...env }), cwd);
    const screen = await terminal.waitForScreen(/^lango node \S+ at (http:\/\/127\.0\.0\.1:\d+)$/m, 1, 60_000);
    const url = /^lango node \S+ at (http:\/\/127\.0\.0\.1:\d+)$/m.exec(screen)![1]!;
    return {
      url,
      terminal,
      stop: async () => {
        terminal.send('C-c');
        return terminal.exitStatus();
      },
    };
  }

  /** Closes one terminal. */
  close(terminal: TmuxTerminal): void {
    const at = this.open.indexOf(terminal);
    if (at >= 0) this.open.splice(at, 1);
    terminal.close();
  }

  closeAll(): void {
    for (const terminal of this.open.splice(0)) terminal.close();
  }
}
