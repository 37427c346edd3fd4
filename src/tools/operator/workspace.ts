import fs from 'node:fs';
import path from 'node:path';
import { ToolExecutionError } from '../../errors';

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_APPEND, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

/** Symbolic links followed in one path at most (the kernel's own limit). */
const MAX_LINK_HOPS = 40;

/** How a file is opened: `write` creates or truncates, `append` creates or appends, `edit` reads and rewrites. */
export type OpenMode = 'read' | 'write' | 'append' | 'edit';

/** A file opened inside the workspace: its descriptor (the caller closes it), real path and size. */
export interface OpenedFile {
  fd: number;
  path: string;
  size: number;
}

/** One entry of {@link Workspace.list}. */
export interface ListedEntry {
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size?: number;
}

/** What {@link Workspace.list} returns: the folder as displayed, its entries, and whether `max` cut them. */
export interface ListResult {
  path: string;
  entries: ListedEntry[];
  truncated: boolean;
}

/**
 * The folder the operator's file and shell tools are confined to. Every path
 * the model gives is checked against the root: `..` and absolute paths that
 * leave it, symbolic links that point out of it, regular files with more
 * than one hard link (one may lead to any file on the same disk: the vault's
 * key) and anything inside the node's data directory are refused.
 *
 * The file operations never follow a link out, even while a command in the
 * workspace swaps folders for links: they walk the path one component at a
 * time from a descriptor of the root, opening each with `O_NOFOLLOW` relative
 * to the folder already open (`/proc/self/fd/N/name`, Linux's `openat`). A
 * link met on the way is read and its target walked the same way from the
 * root, so it is followed only while it stays inside.
 */
export interface Workspace {
  /** Real (symlink-free) absolute path of the root. */
  readonly root: string;
  /**
   * Resolves `relative` (relative to the root, or absolute inside it) to a
   * real absolute path inside the workspace, or throws a
   * {@link ToolExecutionError} naming why it was refused. The path need not
   * exist. For a command's working directory; files go through the methods below.
   */
  resolve(relative: string): string;
  /** The path as the model should see it: relative to the root (`.` for the root). */
  display(absolute: string): string;
  /** Opens a regular file; `write`, `append` create it (and its folders); `write` truncates it. */
  openFile(relative: string, mode: OpenMode): OpenedFile;
  /** Creates a folder and its parents; returns its real path. */
  mkdir(relative: string): string;
  /** Deletes a file, a link (never its target) or a folder (non-empty ones only when `recursive`). */
  remove(relative: string, recursive: boolean): string;
  /** The entries of a folder (below it too when `recursive`), at most `max`; never enters a link or the data directory. */
  list(relative: string, recursive: boolean, max: number): ListResult;
}

/** Options for {@link createWorkspace}. */
export interface WorkspaceOptions {
  /** The workspace root; created if missing. */
  root: string;
  /** The node's data directory: never reachable, unless the root itself lives inside it. */
  dataDir: string;
}

/** True when `child` is `parent` or lies below it (both absolute, normalised). */
export function isWithin(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Resolves symlinks in the deepest existing ancestor of `target`, keeping the rest as written. */
function realpathAllowMissing(target: string): string {
  const missing: string[] = [];
  let current = target;
  for (;;) {
    try {
      const real = fs.realpathSync(current);
      return missing.length ? path.join(real, ...missing.reverse()) : real;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      const parent = path.dirname(current);
      if (parent === current) return target;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** Closes `fd`, ignoring a descriptor already gone. */
function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already closed
  }
}

/** A folder held open during a walk: its descriptor and its real path. */
interface OpenDir {
  fd: number;
  path: string;
}

/**
 * Creates the workspace, making the root folder if needed.
 * Throws when the root is the data directory itself: then the data directory
 * could not be fenced off.
 * @example
 * const ws = createWorkspace({ root: '/srv/lango/workspace', dataDir: '/srv/lango' });
 * ws.resolve('notes/todo.md'); // '/srv/lango/workspace/notes/todo.md'
 * ws.resolve('../config.yaml'); // throws: leaves the workspace
 */
export function createWorkspace(options: WorkspaceOptions): Workspace {
  // Created 0700 when missing, whatever the umask: by default it sits in the data folder, which is the user's alone.
  fs.mkdirSync(options.root, { recursive: true, mode: 0o700 });
  const root = fs.realpathSync(options.root);
  const rootStat = fs.statSync(root);
  const dataDir = realpathAllowMissing(path.resolve(options.dataDir));
  if (root === dataDir) {
    throw new ToolExecutionError(`tools.fs.root must not be the data directory itself (${root})`);
  }
  // A root inside the data directory (the default dataDir/workspace) is fine: the
  // rest of the data directory is outside the root anyway. A root around the
  // data directory must fence it off.
  const fenceDataDir = !isWithin(dataDir, root);
  // What the agent creates in a workspace inside the data folder is private whatever the umask (issue 37, 7).
  const dirMode = fenceDataDir ? 0o777 : 0o700;
  const fileMode = fenceDataDir ? 0o666 : 0o600;
  let dataDirStat: fs.Stats | undefined;
  try {
    dataDirStat = fs.statSync(dataDir);
  } catch {
    // not created yet: fenced by path only
  }
  // Linux names a folder held open as /proc/self/fd/N: opening N/name is openat(N, name), immune to renames above N.
  const procFd = fs.existsSync('/proc/self/fd');
  const at = (dir: OpenDir, name: string) => (procFd ? `/proc/self/fd/${dir.fd}/${name}` : path.join(dir.path, name));

  const outside = (given: string) => new ToolExecutionError(`path "${given}" is outside the workspace`);
  const throughLink = (given: string) =>
    new ToolExecutionError(`path "${given}" leads outside the workspace through a symbolic link`);
  const inDataDir = (given: string) =>
    new ToolExecutionError(`path "${given}" is inside the node's data directory, which is off limits`);

  /** The components of `given` below the root, `..` applied as written; refuses a path that leaves the root. */
  function components(given: string): string[] {
    if (typeof given !== 'string' || given.length === 0) {
      throw new ToolExecutionError('path is empty: give a path relative to the workspace');
    }
    if (given.includes('\0')) throw new ToolExecutionError('path contains a NUL byte');
    const joined = path.resolve(root, given);
    if (!isWithin(root, joined)) throw outside(given);
    return path.relative(root, joined).split(path.sep).filter(Boolean);
  }

  function resolve(relative: string): string {
    const joined = path.join(root, ...components(relative));
    const real = realpathAllowMissing(joined);
    if (!isWithin(root, real)) throw throughLink(relative);
    if (fenceDataDir && isWithin(dataDir, real)) throw inDataDir(relative);
    return real;
  }

  function openRoot(): OpenDir {
    const fd = fs.openSync(root, O_RDONLY | O_DIRECTORY);
    const stat = fs.fstatSync(fd);
    if (stat.ino !== rootStat.ino || stat.dev !== rootStat.dev) {
      closeQuietly(fd);
      throw new ToolExecutionError(`the workspace root ${root} was replaced; restart the node`);
    }
    return { fd, path: root };
  }

  /** Refuses a folder that is the data directory (by identity, so no rename or link gets around it). */
  function checkFence(dir: OpenDir, given: string): void {
    if (!fenceDataDir) return;
    const stat = fs.fstatSync(dir.fd);
    const same = dataDirStat && stat.ino === dataDirStat.ino && stat.dev === dataDirStat.dev;
    if (same || isWithin(dataDir, dir.path)) throw inDataDir(given);
  }

  /** Where the link at `dir/name` points, as components below the root; refuses a target outside it. */
  function linkTarget(dir: OpenDir, name: string, given: string): string[] {
    let target: string;
    try {
      target = fs.readlinkSync(at(dir, name));
    } catch (error) {
      // No longer a link (EINVAL) or gone: something renamed it between the open and now.
      if (errnoOf(error) === 'EINVAL' || errnoOf(error) === 'ENOENT') {
        throw new ToolExecutionError(`path "${given}" changed while it was being opened; try again`);
      }
      throw error;
    }
    const absolute = path.resolve(dir.path, target);
    if (!isWithin(root, absolute)) throw throughLink(given);
    return path.relative(root, absolute).split(path.sep).filter(Boolean);
  }

  /**
   * Walks to the folder holding the last component of `given` and hands it,
   * open, to `final` with that component's name (`undefined` for the root
   * itself); the folder is closed once `final` returns. Links in the middle
   * are followed while they stay inside; `create` makes missing folders.
   * `final` returns its result, or the components of a link to walk instead.
   */
  function walk<T>(
    given: string,
    create: boolean,
    final: (dir: OpenDir, name: string | undefined) => { done: T } | { follow: string[] },
  ): T {
    let parts = components(given);
    for (let hops = 0; hops <= MAX_LINK_HOPS; hops += 1) {
      let dir = openRoot();
      try {
        let restart: string[] | undefined;
        for (let i = 0; i < parts.length - 1 && !restart; i += 1) {
          const name = parts[i];
          let fd: number | undefined;
          for (let attempt = 0; fd === undefined && !restart; attempt += 1) {
            try {
              fd = fs.openSync(at(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            } catch (error) {
              const code = errnoOf(error);
              if (code === 'ENOENT' && create && attempt < 3) {
                try {
                  fs.mkdirSync(at(dir, name), dirMode);
                } catch (made) {
                  if (errnoOf(made) !== 'EEXIST') throw made;
                }
                continue;
              }
              if ((code === 'ELOOP' || code === 'ENOTDIR') && isLink(dir, name)) {
                restart = [...linkTarget(dir, name, given), ...parts.slice(i + 1)];
                continue;
              }
              throw error;
            }
          }
          if (fd === undefined) break;
          const next = { fd, path: path.join(dir.path, name) };
          closeQuietly(dir.fd);
          dir = next;
          checkFence(dir, given);
        }
        if (!restart) {
          const name = parts.length > 0 ? parts[parts.length - 1] : undefined;
          if (name !== undefined && fenceDataDir && isWithin(dataDir, path.join(dir.path, name))) {
            throw inDataDir(given);
          }
          const outcome = final(dir, name);
          if ('done' in outcome) return outcome.done;
          restart = [...outcome.follow];
        }
        parts = restart;
      } finally {
        closeQuietly(dir.fd);
      }
    }
    throw new ToolExecutionError(`path "${given}" goes through too many symbolic links`);
  }

  function isLink(dir: OpenDir, name: string): boolean {
    try {
      return fs.lstatSync(at(dir, name)).isSymbolicLink();
    } catch {
      return false;
    }
  }

  function openFile(given: string, mode: OpenMode): OpenedFile {
    const flags =
      O_NOFOLLOW |
      O_NONBLOCK |
      { read: O_RDONLY, write: O_WRONLY | O_CREAT, append: O_WRONLY | O_CREAT | O_APPEND, edit: O_RDWR }[mode];
    return walk<OpenedFile>(given, mode === 'write' || mode === 'append', (dir, name) => {
      if (name === undefined) throw new ToolExecutionError(`"${given}" is the workspace root, a directory`);
      let fd: number;
      try {
        fd = fs.openSync(at(dir, name), flags, fileMode);
      } catch (error) {
        if (errnoOf(error) === 'ELOOP' && isLink(dir, name)) return { follow: linkTarget(dir, name, given) };
        throw error;
      }
      try {
        const stat = fs.fstatSync(fd);
        if (stat.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
        if (!stat.isFile()) throw new ToolExecutionError(`"${given}" is not a regular file`);
        // Checked before anything is truncated: a second name may be a way to a file outside.
        if (stat.nlink > 1) {
          throw new ToolExecutionError(
            `"${given}" has ${stat.nlink} hard links; a file with more than one may lie outside the workspace`,
          );
        }
        if (mode === 'write') fs.ftruncateSync(fd, 0);
        return { done: { fd, path: path.join(dir.path, name), size: mode === 'write' ? 0 : stat.size } };
      } catch (error) {
        closeQuietly(fd);
        throw error;
      }
    });
  }

  function mkdir(given: string): string {
    return walk<string>(given, true, (dir, name) => {
      if (name === undefined) return { done: root };
      try {
        fs.mkdirSync(at(dir, name), dirMode);
      } catch (error) {
        if (errnoOf(error) !== 'EEXIST') throw error;
        if (isLink(dir, name)) return { follow: linkTarget(dir, name, given) };
        if (!fs.lstatSync(at(dir, name)).isDirectory()) throw error;
      }
      return { done: path.join(dir.path, name) };
    });
  }

  /** Deletes `dir/name`, a folder, and everything below it without following a link or leaving the folder. */
  function removeTree(dir: OpenDir, name: string, given: string): void {
    const fd = fs.openSync(at(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    const sub = { fd, path: path.join(dir.path, name) };
    try {
      checkFence(sub, given);
      for (const entry of fs.readdirSync(procFd ? `/proc/self/fd/${fd}` : sub.path)) {
        if (fs.lstatSync(at(sub, entry)).isDirectory()) removeTree(sub, entry, given);
        else fs.unlinkSync(at(sub, entry));
      }
    } finally {
      closeQuietly(fd);
    }
    fs.rmdirSync(at(dir, name));
  }

  function remove(given: string, recursive: boolean): string {
    return walk<string>(given, false, (dir, name) => {
      if (name === undefined) throw new ToolExecutionError('refusing to delete the workspace root');
      const target = path.join(dir.path, name);
      if (fenceDataDir && isWithin(target, dataDir)) {
        throw new ToolExecutionError(`refusing to delete "${given}": it holds the node's data directory`);
      }
      // A link is removed itself: its target, inside or out, is never touched.
      if (!fs.lstatSync(at(dir, name)).isDirectory()) fs.unlinkSync(at(dir, name));
      else if (recursive) removeTree(dir, name, given);
      else fs.rmdirSync(at(dir, name));
      return { done: target };
    });
  }

  function list(given: string, recursive: boolean, max: number): ListResult {
    return walk<ListResult>(given, false, (parent, name) => {
      let dir: OpenDir;
      if (name === undefined) dir = { fd: fs.openSync(root, O_RDONLY | O_DIRECTORY), path: root };
      else {
        try {
          dir = {
            fd: fs.openSync(at(parent, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW),
            path: path.join(parent.path, name),
          };
        } catch (error) {
          if ((errnoOf(error) === 'ELOOP' || errnoOf(error) === 'ENOTDIR') && isLink(parent, name)) {
            return { follow: linkTarget(parent, name, given) };
          }
          throw error;
        }
      }
      const entries: ListedEntry[] = [];
      let truncated = false;
      const visit = (folder: OpenDir): void => {
        const names = fs.readdirSync(procFd ? `/proc/self/fd/${folder.fd}` : folder.path).sort();
        for (const entry of names) {
          if (entries.length >= max) {
            truncated = true;
            return;
          }
          const full = path.join(folder.path, entry);
          const stat = fs.lstatSync(at(folder, entry));
          const isDataDir = dataDirStat && stat.ino === dataDirStat.ino && stat.dev === dataDirStat.dev;
          if (fenceDataDir && (isDataDir || isWithin(dataDir, full))) continue;
          const type = stat.isSymbolicLink()
            ? 'symlink'
            : stat.isDirectory()
              ? 'directory'
              : stat.isFile()
                ? 'file'
                : 'other';
          entries.push({ path: display(full), type, ...(type === 'file' ? { size: stat.size } : {}) });
          if (recursive && type === 'directory') {
            let fd: number;
            try {
              fd = fs.openSync(at(folder, entry), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            } catch {
              continue; // replaced meanwhile (by a link, or removed): not entered
            }
            try {
              visit({ fd, path: full });
            } finally {
              closeQuietly(fd);
            }
          }
        }
      };
      try {
        checkFence(dir, given);
        visit(dir);
      } finally {
        closeQuietly(dir.fd);
      }
      return { done: { path: display(dir.path), entries, truncated } };
    });
  }

  const display = (absolute: string) => path.relative(root, absolute) || '.';

  return {
    root,
    resolve,
    display,
    openFile,
    mkdir,
    remove,
    list,
  };
}
