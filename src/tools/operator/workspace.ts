import fs from 'node:fs';
import path from 'node:path';
import { ToolExecutionError } from '../../errors';

/**
 * The folder the operator's file and shell tools are confined to. Every path
 * the model gives is resolved here, once, before anything touches the disk:
 * `..` and absolute paths that leave the root, symlinks that point out of it,
 * and anything inside the node's own data directory are refused.
 */
export interface Workspace {
  /** Real (symlink-free) absolute path of the root. */
  readonly root: string;
  /**
   * Resolves `relative` (relative to the root, or absolute inside it) to a
   * real absolute path inside the workspace, or throws a
   * {@link ToolExecutionError} naming why it was refused. The path need not
   * exist; its deepest existing ancestor is resolved through symlinks.
   */
  resolve(relative: string): string;
  /** True when deleting `absolute` would take the node's data directory with it. */
  holdsDataDir(absolute: string): boolean;
  /** The path as the model should see it: relative to the root (`.` for the root). */
  display(absolute: string): string;
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
  fs.mkdirSync(options.root, { recursive: true });
  const root = fs.realpathSync(options.root);
  const dataDir = realpathAllowMissing(path.resolve(options.dataDir));
  if (root === dataDir) {
    throw new ToolExecutionError(`tools.fs.root must not be the data directory itself (${root})`);
  }
  // A root inside the data directory (the default dataDir/workspace) is fine: the
  // rest of the data directory is outside the root anyway. A root around the
  // data directory must fence it off.
  const fenceDataDir = !isWithin(dataDir, root);

  function resolve(relative: string): string {
    if (typeof relative !== 'string' || relative.length === 0) {
      throw new ToolExecutionError('path is empty: give a path relative to the workspace');
    }
    if (relative.includes('\0')) throw new ToolExecutionError('path contains a NUL byte');
    const joined = path.resolve(root, relative);
    if (!isWithin(root, joined)) {
      throw new ToolExecutionError(`path "${relative}" is outside the workspace`);
    }
    const real = realpathAllowMissing(joined);
    if (!isWithin(root, real)) {
      throw new ToolExecutionError(`path "${relative}" leads outside the workspace through a symbolic link`);
    }
    if (fenceDataDir && isWithin(dataDir, real)) {
      throw new ToolExecutionError(`path "${relative}" is inside the node's data directory, which is off limits`);
    }
    return real;
  }

  return {
    root,
    resolve,
    holdsDataDir: (absolute) => fenceDataDir && isWithin(absolute, dataDir),
    display: (absolute) => path.relative(root, absolute) || '.',
  };
}
