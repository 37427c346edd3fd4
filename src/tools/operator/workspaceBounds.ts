import fs from 'node:fs';
import path from 'node:path';
import { ToolExecutionError } from '../../errors';

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

/** The refusal of a path that leaves the workspace as written. */
const outside = (given: string) => new ToolExecutionError(`path "${given}" is outside the workspace`);

/** The refusal of a path that leaves the workspace through a link. */
export const throughLink = (given: string) =>
  new ToolExecutionError(`path "${given}" leads outside the workspace through a symbolic link`);

/** The refusal of a path inside the node's data directory. */
const inDataDir = (given: string) =>
  new ToolExecutionError(`path "${given}" is inside the node's data directory, which is off limits`);

/** Whether two stats name the same file (so no rename or link gets around a comparison). */
const sameFile = (a: fs.Stats | undefined, b: fs.Stats) => Boolean(a && a.ino === b.ino && a.dev === b.dev);

/**
 * Where the workspace ends: its real root, and the node's data directory
 * fenced off when the root lies around it. It checks paths as written and
 * folders by identity; walking a path safely is {@link WorkspaceWalker}'s job.
 */
export class WorkspaceBounds {
  /** Real (symlink-free) absolute path of the root. */
  readonly root: string;
  private readonly rootStat: fs.Stats;
  private readonly dataDir: string;
  /**
   * A root inside the data directory (the default dataDir/workspace) is fine: the rest of the data directory is
   * outside the root anyway. A root around the data directory must fence it off.
   */
  private readonly fenceDataDir: boolean;
  /** Unset while the data directory is not created yet: then it is fenced by path only. */
  private readonly dataDirStat: fs.Stats | undefined;
  /** The mode of the folders the agent creates (the umask applies). */
  readonly dirMode: number;
  /** The mode of the files the agent creates (the umask applies). */
  readonly fileMode: number;

  /** Makes the root folder if needed; throws when the root is the data directory itself (it could not be fenced). */
  constructor(options: { root: string; dataDir: string }) {
    // Created 0700 when missing, whatever the umask: by default it sits in the data folder, which is the user's alone.
    fs.mkdirSync(options.root, { recursive: true, mode: 0o700 });
    this.root = fs.realpathSync(options.root);
    this.rootStat = fs.statSync(this.root);
    this.dataDir = realpathAllowMissing(path.resolve(options.dataDir));
    if (this.root === this.dataDir) {
      throw new ToolExecutionError(`tools.fs.root must not be the data directory itself (${this.root})`);
    }
    this.fenceDataDir = !isWithin(this.dataDir, this.root);
    // What the agent creates in a workspace inside the data folder is private whatever the umask (issue 37, 7).
    this.dirMode = this.fenceDataDir ? 0o777 : 0o700;
    this.fileMode = this.fenceDataDir ? 0o666 : 0o600;
    let dataDirStat: fs.Stats | undefined;
    try {
      dataDirStat = fs.statSync(this.dataDir);
    } catch {
      // not created yet: fenced by path only
    }
    this.dataDirStat = dataDirStat;
  }

  /** The components of `given` below the root, `..` applied as written; refuses a path that leaves the root. */
  components(given: string): string[] {
    if (typeof given !== 'string' || given.length === 0) {
      throw new ToolExecutionError('path is empty: give a path relative to the workspace');
    }
    if (given.includes('\0')) throw new ToolExecutionError('path contains a NUL byte');
    const joined = path.resolve(this.root, given);
    if (!isWithin(this.root, joined)) throw outside(given);
    return path.relative(this.root, joined).split(path.sep).filter(Boolean);
  }

  /** The real path of `given` (which need not exist), refused when a link leads out or it is in the data directory. */
  resolve(given: string): string {
    const joined = path.join(this.root, ...this.components(given));
    const real = realpathAllowMissing(joined);
    if (!isWithin(this.root, real)) throw throughLink(given);
    if (this.fenceDataDir && isWithin(this.dataDir, real)) throw inDataDir(given);
    return real;
  }

  /** The path as the model should see it: relative to the root (`.` for the root). */
  display(absolute: string): string {
    return path.relative(this.root, absolute) || '.';
  }

  /** Refuses a descriptor of the root that is no longer the root the workspace was made with. */
  checkRoot(fd: number): void {
    const stat = fs.fstatSync(fd);
    if (stat.ino !== this.rootStat.ino || stat.dev !== this.rootStat.dev) {
      throw new ToolExecutionError(`the workspace root ${this.root} was replaced; restart the node`);
    }
  }

  /** Whether the file `stat` describes, at `absolute`, is fenced off: the data directory or inside it. */
  fenced(stat: fs.Stats, absolute: string): boolean {
    return this.fenceDataDir && (sameFile(this.dataDirStat, stat) || isWithin(this.dataDir, absolute));
  }

  /** Refuses an open folder that is the data directory (by identity) or lies inside it. */
  checkFolder(fd: number, folder: string, given: string): void {
    if (!this.fenceDataDir) return;
    if (this.fenced(fs.fstatSync(fd), folder)) throw inDataDir(given);
  }

  /** Refuses a path, as written, inside the data directory. */
  checkPath(absolute: string, given: string): void {
    if (this.fenceDataDir && isWithin(this.dataDir, absolute)) throw inDataDir(given);
  }

  /** Whether deleting `absolute` would delete the data directory with it. */
  holdsDataDir(absolute: string): boolean {
    return this.fenceDataDir && isWithin(absolute, this.dataDir);
  }
}
