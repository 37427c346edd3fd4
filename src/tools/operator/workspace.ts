import fs from 'node:fs';
import path from 'node:path';
import { ToolExecutionError } from '../../errors';
import { WorkspaceBounds } from './workspaceBounds';
import { closeQuietly, errnoOf, type OpenDir, type WalkStep, WorkspaceWalker } from './workspaceWalker';

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_APPEND, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

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

/** The open flags of each {@link OpenMode}: never through a link, never blocking on a FIFO. */
const OPEN_FLAGS: Record<OpenMode, number> = {
  read: O_RDONLY,
  write: O_WRONLY | O_CREAT,
  append: O_WRONLY | O_CREAT | O_APPEND,
  edit: O_RDWR,
};

/** Opens a regular file with one name only; `write` and `append` create it (and its folders), `write` truncates it. */
function openFile(walker: WorkspaceWalker, given: string, mode: OpenMode): OpenedFile {
  const flags = O_NOFOLLOW | O_NONBLOCK | OPEN_FLAGS[mode];
  return walker.walk<OpenedFile>(given, mode === 'write' || mode === 'append', (dir, name) => {
    if (name === undefined) throw new ToolExecutionError(`"${given}" is the workspace root, a directory`);
    let fd: number;
    try {
      fd = fs.openSync(walker.at(dir, name), flags, walker.bounds.fileMode);
    } catch (error) {
      if (errnoOf(error) === 'ELOOP' && walker.isLink(dir, name))
        return { follow: walker.linkTarget(dir, name, given) };
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

/** Creates a folder and its parents; returns its real path. */
function makeFolder(walker: WorkspaceWalker, given: string): string {
  return walker.walk<string>(given, true, (dir, name) => {
    if (name === undefined) return { done: walker.bounds.root };
    try {
      fs.mkdirSync(walker.at(dir, name), walker.bounds.dirMode);
    } catch (error) {
      if (errnoOf(error) !== 'EEXIST') throw error;
      if (walker.isLink(dir, name)) return { follow: walker.linkTarget(dir, name, given) };
      if (!fs.lstatSync(walker.at(dir, name)).isDirectory()) throw error;
    }
    return { done: path.join(dir.path, name) };
  });
}

/** Deletes `dir/name`, a folder, and everything below it without following a link or leaving the folder. */
function removeTree(walker: WorkspaceWalker, dir: OpenDir, name: string, given: string): void {
  const fd = fs.openSync(walker.at(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  const sub = { fd, path: path.join(dir.path, name) };
  try {
    walker.bounds.checkFolder(sub.fd, sub.path, given);
    for (const entry of fs.readdirSync(walker.entriesOf(sub))) {
      if (fs.lstatSync(walker.at(sub, entry)).isDirectory()) removeTree(walker, sub, entry, given);
      else fs.unlinkSync(walker.at(sub, entry));
    }
  } finally {
    closeQuietly(fd);
  }
  fs.rmdirSync(walker.at(dir, name));
}

/** Deletes a file, a link (never its target) or a folder (non-empty ones only when `recursive`). */
function remove(walker: WorkspaceWalker, given: string, recursive: boolean): string {
  return walker.walk<string>(given, false, (dir, name) => {
    if (name === undefined) throw new ToolExecutionError('refusing to delete the workspace root');
    const target = path.join(dir.path, name);
    if (walker.bounds.holdsDataDir(target)) {
      throw new ToolExecutionError(`refusing to delete "${given}": it holds the node's data directory`);
    }
    // A link is removed itself: its target, inside or out, is never touched.
    if (!fs.lstatSync(walker.at(dir, name)).isDirectory()) fs.unlinkSync(walker.at(dir, name));
    else if (recursive) removeTree(walker, dir, name, given);
    else fs.rmdirSync(walker.at(dir, name));
    return { done: target };
  });
}

/** What kind of entry `stat` describes, as {@link ListedEntry} names it. */
function entryType(stat: fs.Stats): ListedEntry['type'] {
  if (stat.isSymbolicLink()) return 'symlink';
  if (stat.isDirectory()) return 'directory';
  return stat.isFile() ? 'file' : 'other';
}

/** Opens the folder to list, `parent/name` (the root when `name` is unset), or says where a link there leads. */
function openListed(
  walker: WorkspaceWalker,
  parent: OpenDir,
  name: string | undefined,
  given: string,
): WalkStep<OpenDir> {
  const { root } = walker.bounds;
  if (name === undefined) return { done: { fd: fs.openSync(root, O_RDONLY | O_DIRECTORY), path: root } };
  try {
    return {
      done: {
        fd: fs.openSync(walker.at(parent, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW),
        path: path.join(parent.path, name),
      },
    };
  } catch (error) {
    if ((errnoOf(error) === 'ELOOP' || errnoOf(error) === 'ENOTDIR') && walker.isLink(parent, name)) {
      return { follow: walker.linkTarget(parent, name, given) };
    }
    throw error;
  }
}

/** The entries of the open folder `top`, sorted by name, below it too when `recursive`, at most `max`. */
function collectEntries(
  walker: WorkspaceWalker,
  top: OpenDir,
  recursive: boolean,
  max: number,
): Omit<ListResult, 'path'> {
  const entries: ListedEntry[] = [];
  let truncated = false;
  const visit = (folder: OpenDir): void => {
    for (const entry of fs.readdirSync(walker.entriesOf(folder)).sort()) {
      if (entries.length >= max) {
        truncated = true;
        return;
      }
      const full = path.join(folder.path, entry);
      const stat = fs.lstatSync(walker.at(folder, entry));
      if (walker.bounds.fenced(stat, full)) continue;
      const type = entryType(stat);
      entries.push({ path: walker.bounds.display(full), type, ...(type === 'file' ? { size: stat.size } : {}) });
      if (recursive && type === 'directory') {
        let fd: number;
        try {
          fd = fs.openSync(walker.at(folder, entry), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
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
  visit(top);
  return { entries, truncated };
}

/** The entries of a folder (below it too when `recursive`), at most `max`; never enters a link or the data directory. */
function list(walker: WorkspaceWalker, given: string, recursive: boolean, max: number): ListResult {
  return walker.walk<ListResult>(given, false, (parent, name) => {
    const opened = openListed(walker, parent, name, given);
    if ('follow' in opened) return opened;
    const dir = opened.done;
    try {
      walker.bounds.checkFolder(dir.fd, dir.path, given);
      return { done: { path: walker.bounds.display(dir.path), ...collectEntries(walker, dir, recursive, max) } };
    } finally {
      closeQuietly(dir.fd);
    }
  });
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
  const bounds = new WorkspaceBounds(options);
  const walker = new WorkspaceWalker(bounds);
  return {
    root: bounds.root,
    resolve: (relative) => bounds.resolve(relative),
    display: (absolute) => bounds.display(absolute),
    openFile: (relative, mode) => openFile(walker, relative, mode),
    mkdir: (relative) => makeFolder(walker, relative),
    remove: (relative, recursive) => remove(walker, relative, recursive),
    list: (relative, recursive, max) => list(walker, relative, recursive, max),
  };
}
