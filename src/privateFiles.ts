import fs from 'node:fs';
import { ConfigError } from './errors';

/**
 * The data folder holds the node's keys, database and tokens: everything the
 * node creates there is its user's alone, whatever the umask (a mode passed
 * to `mkdir` or `open` is narrowed by the umask, never widened, so an
 * explicit 0700/0600 holds under `umask 000`).
 */

/** Mode of every folder the node creates in its data folder. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of every file the node creates in its data folder. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` (and any missing parent) as 0700; an existing folder is left
 * as it is.
 * @example
 * makePrivateDir(path.join(dataDir, 'exec-jobs'));
 */
export function makePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Creates `file` as 0600 with `content`, never through a link and never over
 * an existing file (`EEXIST` otherwise).
 */
export function writeNewPrivateFile(file: string, content: string): void {
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  const fd = fs.openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, PRIVATE_FILE_MODE);
  try {
    fs.writeSync(fd, content);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A file or folder that another user could read or replace: the node refuses
 * to start on it (exit 2), naming the path and the fix.
 */
export class UnsafePathError extends ConfigError {}

/**
 * Checks that `target` (a key or token file, or the folder holding one) is
 * this user's and that no one else may replace it: a folder not writable by
 * others (a link to one is followed: the operator chose it), a file neither
 * readable nor writable by others and never a link.
 * Throws {@link UnsafePathError} naming the path and the command that fixes it.
 * @example
 * assertPrivate(dataDir, 'folder', 'the folder of the vault master key');
 * assertPrivate(path.join(dataDir, 'master.key'), 'file', 'the vault master key');
 */
export function assertPrivate(target: string, kind: 'file' | 'folder', what: string): void {
  const stat = kind === 'folder' ? fs.statSync(target) : fs.lstatSync(target);
  const refuse = (problem: string, fix: string) =>
    new UnsafePathError(`${what} ${target} ${problem}; refusing to start`, [`${target}: ${fix}`]);
  if (kind === 'file' && !stat.isFile()) throw refuse('is not a plain file', 'replace it with the file itself');
  if (kind === 'folder' && !stat.isDirectory()) throw refuse('is not a folder', 'give a folder');
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    throw refuse(`belongs to another user (uid ${stat.uid})`, `run the node as its owner, or chown ${uid} ${target}`);
  const mode = stat.mode & 0o777;
  if (kind === 'folder' && mode & 0o022)
    throw refuse(`is writable by others (mode ${mode.toString(8)})`, `run chmod 700 ${target}`);
  if (kind === 'file' && mode & 0o077)
    throw refuse(`is readable or writable by others (mode ${mode.toString(8)})`, `run chmod 600 ${target}`);
}
