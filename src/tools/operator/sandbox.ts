import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { LangoError } from '../../errors';
import { isWithin } from './workspace';

/** `tools.exec.sandbox`: `auto` confines when bubblewrap works, `bwrap` insists on it, `off` never confines. */
export type SandboxMode = 'auto' | 'bwrap' | 'off';

/** Options for {@link createSandbox}. */
export interface SandboxOptions {
  mode: SandboxMode;
  /** The bubblewrap binary (`tools.exec.bwrapPath`). */
  bwrapPath: string;
  /** `tools.exec.network`: commands may reach the network (the host's, loopback included). */
  network: boolean;
  /** Real path of the workspace: the only writable place a command sees. */
  workspace: string;
  /** The node's data directory (keys, database): never visible to a command. */
  dataDir: string;
  /** How long the start-up self-test may take. */
  probeTimeoutMs?: number;
}

/**
 * Whether commands are confined, and if not, why and what happens to them:
 * each waits for the user's approval (`ask`), or none runs (`refused`, when
 * `tools.exec.sandbox: bwrap` cannot be honoured).
 */
export type SandboxStatus =
  | { confined: true; kind: 'bwrap'; network: boolean }
  | { confined: false; reason: string; commands: 'ask' | 'refused' };

/** How to start one command: the program, its arguments and the host-side working directory. */
export interface SandboxedCommand {
  file: string;
  args: string[];
  cwd: string;
}

/**
 * Where commands run. `exec_*`, background jobs and script skills all start
 * their process through {@link Sandbox.command}, so one place decides what a
 * command can see.
 */
export interface Sandbox {
  readonly status: SandboxStatus;
  /**
   * Wraps `argv` (run in `cwd`, a folder of the workspace) so it starts
   * confined; `readOnly` adds folders the command may read (a skill's own
   * folder). Unconfined, it returns `argv` as is.
   */
  command(run: { argv: string[]; cwd: string; readOnly?: string[] }): SandboxedCommand;
}

/** `tools.exec.sandbox: bwrap` and bubblewrap cannot run: the exec and skills families refuse to start. */
export class SandboxUnavailableError extends LangoError {}

/**
 * System folders bound read-only (symlinks, as on merged-/usr systems, are
 * recreated as symlinks). Nothing else of the host is visible: not `/home`,
 * `/root`, `/var`, `/srv`, `/opt` nor the node's own folders.
 */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/** How long the self-test may take by default (bubblewrap itself starts in milliseconds). */
const PROBE_TIMEOUT_MS = 5000;

function realOrSelf(target: string): string {
  try {
    return fs.realpathSync(target);
  } catch {
    return path.resolve(target);
  }
}

/**
 * The bubblewrap arguments that run a command confined: new namespaces of
 * every kind (the network's shared only when `network` is on), no
 * capabilities, its own session (no terminal injection), killed with the
 * node; a read-only root holding only the system folders, a private `/tmp`,
 * `/proc` and `/dev`; the workspace bound read-write; the data directory
 * replaced by an empty read-only tmpfs.
 */
export function bwrapArguments(options: {
  network: boolean;
  workspace: string;
  dataDir: string;
  cwd: string;
  readOnly?: string[];
}): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  if (options.network) args.push('--share-net');
  // A private /tmp first, so a node installed below the host's /tmp is bound on top of it, not hidden by it.
  args.push('--tmpfs', '/tmp');
  const sources: string[] = [];
  for (const system of SYSTEM_PATHS) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(system);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(system), system);
    else if (stat.isDirectory()) {
      args.push('--ro-bind', system, system);
      sources.push(system);
    }
  }
  // The node binary's installation (`node` works in commands) when it lives outside the system folders.
  const nodePrefix = path.dirname(path.dirname(realOrSelf(process.execPath)));
  if (!sources.some((source) => isWithin(source, nodePrefix)) && nodePrefix !== '/') {
    args.push('--ro-bind', nodePrefix, nodePrefix);
    sources.push(nodePrefix);
  }
  // With the network on, name resolution may need the target of a symlinked resolv.conf (systemd-resolved).
  if (options.network) {
    const resolv = realOrSelf('/etc/resolv.conf');
    if (!sources.some((source) => isWithin(source, resolv))) args.push('--ro-bind-try', resolv, resolv);
  }
  // The data directory is an empty read-only tmpfs wherever it is: inside a bound folder, under /tmp, or
  // only as the way to a workspace below it. A workspace configured around it (tools.fs.root) is bound first.
  const dataDir = realOrSelf(options.dataDir);
  const around = isWithin(options.workspace, dataDir);
  if (!around) args.push('--tmpfs', dataDir);
  args.push('--bind', options.workspace, options.workspace);
  if (around) args.push('--tmpfs', dataDir);
  for (const folder of options.readOnly ?? []) args.push('--ro-bind', folder, folder);
  args.push('--proc', '/proc', '--dev', '/dev', '--chdir', options.cwd);
  args.push('--remount-ro', dataDir, '--remount-ro', '/');
  return args;
}

/** Runs bubblewrap once with the real arguments; resolves with why it failed, or undefined when it works. */
function selfTest(file: string, args: string[], timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let stderr = '';
    const child = spawn(file, [...args, '--', '/bin/sh', '-c', 'exit 0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {},
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(`${file} did not finish its self-test within ${timeoutMs} ms`);
    }, timeoutMs);
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve(`${file} could not start: ${error.message}`);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve(undefined);
      const said = stderr.trim().split('\n')[0];
      resolve(`${file} failed its self-test (${signal ?? `exit ${code}`})${said ? `: ${said}` : ''}`);
    });
  });
}

/** Why `bwrapPath` cannot be used as a program, or undefined when it can. */
function missingBinary(bwrapPath: string): string | undefined {
  try {
    fs.accessSync(bwrapPath, fs.constants.X_OK);
    return fs.statSync(bwrapPath).isFile() ? undefined : `${bwrapPath} is not a file`;
  } catch {
    return `no bubblewrap at ${bwrapPath} (install the bubblewrap package or set tools.exec.bwrapPath)`;
  }
}

/**
 * Checks once, at start-up, whether commands can be confined, and returns the
 * sandbox they will run in. `auto` falls back to running unconfined (the
 * exec policy then asks the user before every command) with the reason in
 * `status`; `bwrap` throws {@link SandboxUnavailableError} instead.
 * @example
 * const sandbox = await createSandbox({ mode: 'auto', bwrapPath: '/usr/bin/bwrap', network: false,
 *   workspace: ws.root, dataDir });
 * sandbox.status; // { confined: true, kind: 'bwrap', network: false }
 */
export async function createSandbox(options: SandboxOptions): Promise<Sandbox> {
  const base = { network: options.network, workspace: options.workspace, dataDir: options.dataDir };
  let reason: string | undefined;
  if (options.mode === 'off') reason = 'tools.exec.sandbox is off';
  else {
    reason =
      missingBinary(options.bwrapPath) ??
      (await selfTest(
        options.bwrapPath,
        bwrapArguments({ ...base, cwd: options.workspace }),
        options.probeTimeoutMs ?? PROBE_TIMEOUT_MS,
      ));
    if (reason && options.mode === 'bwrap') {
      throw new SandboxUnavailableError(`tools.exec.sandbox is bwrap but bubblewrap is unusable: ${reason}`);
    }
  }
  if (reason) {
    return {
      status: { confined: false, reason, commands: 'ask' },
      command: ({ argv, cwd }) => ({ file: argv[0], args: argv.slice(1), cwd }),
    };
  }
  return {
    status: { confined: true, kind: 'bwrap', network: options.network },
    command: ({ argv, cwd, readOnly }) => ({
      file: options.bwrapPath,
      args: [...bwrapArguments({ ...base, cwd, readOnly }), '--', ...argv],
      cwd,
    }),
  };
}

/** One line for `lango doctor` and the logs: whether commands are confined, and how or why not. */
export function describeSandbox(status: SandboxStatus): string {
  if (status.confined) {
    return `bubblewrap (data directory hidden, root read-only, network ${status.network ? 'on' : 'off'})`;
  }
  const outcome =
    status.commands === 'ask' ? "every command needs the user's approval (policy ask)" : 'commands are refused';
  return `none, commands are NOT confined: ${status.reason}; ${outcome}`;
}
