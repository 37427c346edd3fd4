import fs from 'node:fs';
import path from 'node:path';
import { ToolExecutionError } from '../../errors';
import { isWithin, throughLink, type WorkspaceBounds } from './workspaceBounds';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;

/** Symbolic links followed in one path at most (the kernel's own limit). */
const MAX_LINK_HOPS = 40;

/** A folder held open during a walk: its descriptor and its real path. */
export interface OpenDir {
  fd: number;
  path: string;
}

/** What a walk's last step gives back: its result, or the components of a link to walk instead. */
export type WalkStep<T> = { done: T } | { follow: string[] };

/** The error code of a failed file-system call. */
export const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** Closes `fd`, ignoring a descriptor already gone. */
export function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already closed
  }
}

/**
 * Walks paths inside the workspace without ever following a link out, even
 * while a command swaps folders for links: one component at a time from a
 * descriptor of the root, each opened with `O_NOFOLLOW` relative to the folder
 * already open. A link met on the way is read and its target walked the same
 * way from the root, so it is followed only while it stays inside.
 */
export class WorkspaceWalker {
  /** Linux names a folder held open as /proc/self/fd/N: opening N/name is openat(N, name), immune to renames above N. */
  private readonly procFd = fs.existsSync('/proc/self/fd');

  constructor(readonly bounds: WorkspaceBounds) {}

  /** The path that opens `name` in the open folder `dir`. */
  at(dir: OpenDir, name: string): string {
    return this.procFd ? `/proc/self/fd/${dir.fd}/${name}` : path.join(dir.path, name);
  }

  /** The path that reads the entries of the open folder `dir`. */
  entriesOf(dir: OpenDir): string {
    return this.procFd ? `/proc/self/fd/${dir.fd}` : dir.path;
  }

  /** Whether `dir/name` is a symbolic link now. */
  isLink(dir: OpenDir, name: string): boolean {
    try {
      return fs.lstatSync(this.at(dir, name)).isSymbolicLink();
    } catch {
      return false;
    }
  }

  /** Where the link at `dir/name` points, as components below the root; refuses a target outside it. */
  linkTarget(dir: OpenDir, name: string, given: string): string[] {
    let target: string;
    try {
      target = fs.readlinkSync(this.at(dir, name));
    } catch (error) {
      // No longer a link (EINVAL) or gone: something renamed it between the open and now.
      if (errnoOf(error) === 'EINVAL' || errnoOf(error) === 'ENOENT') {
        throw new ToolExecutionError(`path "${given}" changed while it was being opened; try again`);
      }
      throw error;
    }
    const { root } = this.bounds;
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
  walk<T>(given: string, create: boolean, final: (dir: OpenDir, name: string | undefined) => WalkStep<T>): T {
    let parts = this.bounds.components(given);
    for (let hops = 0; hops <= MAX_LINK_HOPS; hops += 1) {
      let dir = this.openRoot();
      try {
        let restart: string[] | undefined;
        for (let i = 0; i < parts.length - 1 && !restart; i += 1) {
          const opened = this.openFolder(dir, parts[i], given, create);
          if ('link' in opened) {
            restart = [...opened.link, ...parts.slice(i + 1)];
            break;
          }
          const next = { fd: opened.fd, path: path.join(dir.path, parts[i]) };
          closeQuietly(dir.fd);
          dir = next;
          this.bounds.checkFolder(dir.fd, dir.path, given);
        }
        if (!restart) {
          const name = parts.length > 0 ? parts[parts.length - 1] : undefined;
          if (name !== undefined) this.bounds.checkPath(path.join(dir.path, name), given);
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

  /** Opens the root, refused when it was replaced since the workspace was made. */
  private openRoot(): OpenDir {
    const { root } = this.bounds;
    const fd = fs.openSync(root, O_RDONLY | O_DIRECTORY);
    try {
      this.bounds.checkRoot(fd);
    } catch (error) {
      closeQuietly(fd);
      throw error;
    }
    return { fd, path: root };
  }

  /** Opens the folder `dir/name` without following a link (making it first when `create`), or says where a link there leads. */
  private openFolder(dir: OpenDir, name: string, given: string, create: boolean): { fd: number } | { link: string[] } {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return { fd: fs.openSync(this.at(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW) };
      } catch (error) {
        const code = errnoOf(error);
        if (code === 'ENOENT' && create && attempt < 3) {
          try {
            fs.mkdirSync(this.at(dir, name), this.bounds.dirMode);
          } catch (made) {
            if (errnoOf(made) !== 'EEXIST') throw made;
          }
          continue;
        }
        if ((code === 'ELOOP' || code === 'ENOTDIR') && this.isLink(dir, name)) {
          return { link: this.linkTarget(dir, name, given) };
        }
        throw error;
      }
    }
  }
}
