import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { LangoError } from '../../errors';
import { isWithin } from './workspaceBounds';

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

/** What a command needs to start: its argv, working directory (a folder of the workspace) and environment. */
export interface CommandSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Folders the command may read besides the system's and the workspace (a skill's own folder). */
  readOnly?: string[];
}

/** A started command: its process (no stdin, piped output) and how to end it with everything it started. */
export interface CommandProcess {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  /**
   * Ends the command and its descendants. Unconfined, `signal` goes to its
   * process group; confined, the whole sandbox is killed at once (its PID
   * namespace dies with its first process), whatever `signal` says.
   */
  stop(signal: NodeJS.Signals): void;
}

/**
 * Where commands run. `exec_*`, background jobs and script skills all start
 * their process through {@link Sandbox.spawn}, so one place decides what a
 * command can see and how it is stopped.
 */
export interface Sandbox {
  readonly status: SandboxStatus;
  /** Starts a command, confined when the sandbox confines, in a process group of its own. */
  spawn(command: CommandSpec): CommandProcess;
}

/** Signals a detached child's process group (the child alone if the group is gone). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/**
 * Starts bubblewrap with `--info-fd 3`, which reports the host PID of the
 * sandbox's first process. Stopping SIGKILLs that process, and the kernel
 * then kills every process of the namespace, including ones in sessions of
 * their own. Signalling only bubblewrap is not enough: in the first
 * milliseconds, before its child has asked to die with it, the child would
 * outlive it holding the output pipes; so a stop asked for before the PID
 * is known waits for it.
 */
function spawnConfined(file: string, args: string[], command: CommandSpec): CommandProcess {
  const child = spawn(file, ['--info-fd', '3', ...args], {
    cwd: command.cwd,
    env: command.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  }) as ChildProcess as ChildProcessByStdio<null, Readable, Readable>;
  let firstPid: number | undefined;
  let stopping: NodeJS.Signals | undefined;
  let killed = false;
  const killSandbox = () => {
    if (killed || firstPid === undefined || stopping === undefined) return;
    killed = true;
    signalGroup(child, stopping);
    try {
      process.kill(firstPid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  let info = '';
  const infoPipe = child.stdio[3] as Readable;
  infoPipe.on('data', (chunk: Buffer) => {
    if (firstPid !== undefined) return;
    info += chunk.toString('utf8');
    const found = /"child-pid"\s*:\s*(\d+)/.exec(info);
    if (!found) return;
    firstPid = Number(found[1]);
    killSandbox();
  });
  infoPipe.on('error', () => {});
  return {
    child,
    stop(signal) {
      stopping = signal;
      // Before the PID is known bubblewrap is left alone (killing it could orphan its child): the info is
      // milliseconds away, or never comes because bubblewrap failed and exits by itself. SIGKILL does not wait.
      if (firstPid !== undefined) killSandbox();
      else if (signal === 'SIGKILL') signalGroup(child, signal);
    },
  };
}

/** Starts a command as it is, in a process group of its own. */
function spawnUnconfined(command: CommandSpec): CommandProcess {
  const child = spawn(command.argv[0], command.argv.slice(1), {
    cwd: command.cwd,
    env: command.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, stop: (signal) => signalGroup(child, signal) };
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
  if (reason) return { status: { confined: false, reason, commands: 'ask' }, spawn: spawnUnconfined };
  return {
    status: { confined: true, kind: 'bwrap', network: options.network },
    spawn: (command) =>
      spawnConfined(
        options.bwrapPath,
        [...bwrapArguments({ ...base, cwd: command.cwd, readOnly: command.readOnly }), '--', ...command.argv],
        command,
      ),
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
