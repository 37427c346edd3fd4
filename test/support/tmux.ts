import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './waitFor';

/**
 * Why the terminal tests cannot run here, or `undefined` when they can: a
 * bare machine (Node alone, as in the README's quick start) has no tmux and
 * skips them with this reason rather than failing `npm test`.
 */
export function tmuxUnavailable(): string | undefined {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore', timeout: 20_000 });
    return undefined;
  } catch {
    return "no tmux (install Debian's tmux, as .ci/apt-packages does)";
  }
}

/**
 * A real terminal: one tmux server of its own (its own socket), one pane
 * running `command` in `cwd`. Keys go in with `send-keys`, the screen comes
 * back with `capture-pane`; the pane stays after its process exits so the
 * last screen can be read. {@link TmuxTerminal.close} kills the server.
 *
 * The exit status is written to a file by the pane's shell: tmux's own
 * `#{pane_dead_status}` now and then stays empty for good (the process sat
 * exited but unreaped, seen under jest), which read as a process that never ended.
 */
export class TmuxTerminal {
  private readonly socket = `lango-test-${randomUUID().slice(0, 8)}`;
  private readonly statusFile = path.join(os.tmpdir(), `${this.socket}.status`);

  constructor(command: string, cwd: string) {
    const recorded = `${command}; echo $? > ${this.statusFile}`;
    this.tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'main', '-x', '160', '-y', '50', '-c', cwd, recorded);
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

  /** What the pane shows now, without its scrollback. */
  visible(): string {
    return this.tmux('capture-pane', '-p', '-J', '-t', 'main');
  }

  /** The pane's title (what an OSC 0/2 sequence would set). */
  title(): string {
    return this.tmux('display-message', '-p', '-t', 'main', '#{pane_title}').trimEnd();
  }

  /** The tmux paste buffers (what an OSC 52 clipboard write lands in when `set-clipboard` is on). */
  buffers(): string {
    return this.tmux('list-buffers');
  }

  /** Sets a server option (`set-clipboard on`, …). */
  setOption(name: string, value: string): void {
    this.tmux('set-option', '-g', name, value);
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

  /** The exit status once the command has exited. */
  async exitStatus(timeoutMs = 30_000): Promise<number> {
    const status = await waitFor(
      () => {
        // The shell may be part-way through writing it.
        const written = fs.existsSync(this.statusFile) ? fs.readFileSync(this.statusFile, 'utf8') : '';
        return /^\d+\n$/.test(written) ? written : undefined;
      },
      timeoutMs,
      'the command to exit',
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n--- screen ---\n${this.screen()}`);
    });
    return Number(status);
  }

  close(): void {
    fs.rmSync(this.statusFile, { force: true });
    try {
      this.tmux('kill-server');
    } catch {
      // Already gone.
    }
  }
}
