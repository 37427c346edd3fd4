import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { waitFor } from './waitFor';

/**
 * Why the terminal tests cannot run here, or `undefined` when they can: a
 * bare machine (Node alone, as in the README's quick start) has no tmux and
 * skips them with this reason rather than failing `npm test`.
 */
export function tmuxUnavailable(): string | undefined {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore', timeout: 5_000 });
    return undefined;
  } catch {
    return "no tmux (install Debian's tmux, as .ci/apt-packages does)";
  }
}

/**
 * A real terminal: one tmux server of its own (its own socket), one pane
 * running `command` in `cwd`. Keys go in with `send-keys`, the screen comes
 * back with `capture-pane`; the pane stays after its process exits so the
 * exit status can be read. {@link TmuxTerminal.close} kills the server.
 */
export class TmuxTerminal {
  private readonly socket = `lango-test-${randomUUID().slice(0, 8)}`;

  constructor(command: string, cwd: string) {
    this.tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'main', '-x', '160', '-y', '50', '-c', cwd, command);
    this.tmux('set-option', '-t', 'main', 'remain-on-exit', 'on');
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8', timeout: 10_000 });
  }

  /** Types `keys` (tmux key names such as `Enter`, `C-c`, `C-d`, `Up` are keys; other words are typed literally). */
  send(...keys: string[]): void {
    this.tmux('send-keys', '-t', 'main', ...keys);
  }

  /** Types `text` literally, then Enter. */
  type(text: string): void {
    this.tmux('send-keys', '-t', 'main', '-l', text);
    this.send('Enter');
  }

  /** Everything the pane shows, scrollback included, wrapped lines joined. */
  screen(): string {
    return this.tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'main');
  }

  /** Waits until the screen matches `pattern` at least `times` times; returns the screen. */
  async waitForScreen(pattern: RegExp, times = 1, timeoutMs = 20_000): Promise<string> {
    const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
    return waitFor(
      () => {
        const screen = this.screen();
        return (screen.match(global)?.length ?? 0) >= times ? screen : undefined;
      },
      timeoutMs,
      `${times}× ${pattern} on the terminal`,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n--- screen ---\n${this.screen()}`);
    });
  }

  /** The exit status once the pane's process has exited. */
  async exitStatus(timeoutMs = 30_000): Promise<number> {
    const status = await waitFor(
      () => {
        const [dead, code] = this.tmux('display-message', '-p', '-t', 'main', '#{pane_dead} #{pane_dead_status}')
          .trim()
          .split(' ');
        // The status is filled in a moment after the pane is marked dead.
        return dead === '1' && code !== undefined && /^\d+$/.test(code) ? code : undefined;
      },
      timeoutMs,
      'the chat process to exit',
    );
    return Number(status);
  }

  close(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // Already gone.
    }
  }
}
