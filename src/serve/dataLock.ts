import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../errors';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../privateFiles';

/** The lock file's name inside the data folder. */
export const LOCK_FILE = 'lango.lock';

/** Who holds a data folder: written into the lock file as JSON. */
export interface LockHolder {
  pid: number;
  /** The command holding it (`serve`, `chat`, `agents`, …). */
  command: string;
  /** The node's A2A base URL once it listens (only `serve` records one). */
  url?: string;
  startedAt: string;
}

/** A held data folder lock; {@link DataLock.release} gives it up (only if it is still ours). */
export interface DataLock {
  readonly file: string;
  readonly holder: LockHolder;
  /** Records the URL the node listens on, so other commands find it. */
  recordUrl(url: string): void;
  release(): void;
}

/** The data folder is held by another live process: exit 2, naming it. */
export class DataFolderBusyError extends InputError {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `the data folder ${dataDir} is in use by ${describeHolder(holder)}; one node per data folder: ` +
        'give this one another with --data-dir DIR or LANGO_DATA_DIR=DIR',
    );
  }
}

/** `lango serve (pid 123) at http://127.0.0.1:4000`. */
export function describeHolder(holder: LockHolder): string {
  return `lango ${holder.command} (pid ${holder.pid})${holder.url ? ` at ${holder.url}` : ''}`;
}

/** Whether a process with this id runs (EPERM: it does, under another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (typeof value.pid !== 'number' || !Number.isInteger(value.pid) || value.pid <= 0) return undefined;
    return {
      pid: value.pid,
      command: typeof value.command === 'string' ? value.command : 'unknown',
      url: typeof value.url === 'string' ? value.url : undefined,
      startedAt: typeof value.startedAt === 'string' ? value.startedAt : '',
    };
  } catch {
    return undefined;
  }
}

/**
 * The live holder of the data folder, or undefined when it is free: no lock
 * file, or a stale one (its process is gone, or it cannot be read).
 */
export function readDataLock(dataDir: string): LockHolder | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dataDir, LOCK_FILE), 'utf8');
  } catch {
    return undefined;
  }
  const holder = parseHolder(text);
  return holder && alive(holder.pid) ? holder : undefined;
}

/** Writes `content` to a private temp file beside `file` and returns its path. */
function writeTemp(file: string, content: string): string {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  fs.writeFileSync(temp, content, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  return temp;
}

/**
 * Takes the exclusive lock on a data folder for this process. The lock file
 * appears whole or not at all (written aside, then hard-linked into place,
 * which fails when one exists), so a reader never sees half a holder. A lock
 * whose process is gone is stale and replaced.
 * @throws DataFolderBusyError when a live process holds it.
 * @example
 * const lock = acquireDataLock('/srv/lango/.lango', 'serve');
 * lock.recordUrl(url);
 * // … on shutdown
 * lock.release();
 */
export function acquireDataLock(dataDir: string, command: string): DataLock {
  makePrivateDir(dataDir);
  const file = path.join(dataDir, LOCK_FILE);
  let holder: LockHolder = { pid: process.pid, command, startedAt: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    const temp = writeTemp(file, JSON.stringify(holder));
    try {
      fs.linkSync(temp, file);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
      const current = readDataLock(dataDir);
      if (current) throw new DataFolderBusyError(dataDir, current);
      // Stale (its process died without releasing it): take it over.
      fs.rmSync(file, { force: true });
    } finally {
      fs.rmSync(temp, { force: true });
    }
  }
  let released = false;
  const ours = () => parseHolder(safeRead(file))?.pid === process.pid;
  return {
    file,
    get holder() {
      return holder;
    },
    recordUrl(url) {
      if (released) return;
      holder = { ...holder, url };
      // Replaced whole (rename), so readers see the old holder or the new one.
      fs.renameSync(writeTemp(file, JSON.stringify(holder)), file);
    },
    release() {
      if (released) return;
      released = true;
      if (ours()) fs.rmSync(file, { force: true });
    },
  };
}

function safeRead(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
