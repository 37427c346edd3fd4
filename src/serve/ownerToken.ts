import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeNewPrivateFile } from '../privateFiles';

/** The local owner token's file inside the data folder. */
export const OWNER_TOKEN_FILE = 'owner.token';

/** A token as written: URL-safe base64 of 32 random bytes. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The token a serving node wrote, and how to take it back. */
export interface OwnerToken {
  readonly value: string;
  readonly file: string;
  /** Removes the file, only while it still holds this token (a later node's is left alone). */
  remove(): void;
}

/**
 * Writes a new local owner token for the node about to serve `dataDir`
 * (issue 37, 5): 32 random bytes, mode 0600, created fresh (never through a
 * link, never reusing a file), so the CLI of the node's own user is the
 * owner without a flag. Call it while holding the folder's lock.
 * @example
 * const token = writeOwnerToken(dataDir);
 * const app = await createApp(config, { ownerToken: token.value });
 * // … on shutdown
 * token.remove();
 */
export function writeOwnerToken(dataDir: string): OwnerToken {
  const file = path.join(dataDir, OWNER_TOKEN_FILE);
  const value = randomBytes(32).toString('base64url');
  // A previous node's (it stopped without removing it) is replaced: removing a link removes the link only.
  fs.rmSync(file, { force: true });
  writeNewPrivateFile(file, `${value}\n`);
  return {
    value,
    file,
    remove: () => {
      if (readOwnerToken(dataDir) === value) fs.rmSync(file, { force: true });
    },
  };
}

/**
 * The local owner token of the node serving `dataDir`, or undefined when
 * there is none to trust: no file, a link, a file of another user or one
 * others may read, or not a token's shape.
 */
export function readOwnerToken(dataDir: string): string | undefined {
  const file = path.join(dataDir, OWNER_TOKEN_FILE);
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const stat = fs.fstatSync(fd);
      const uid = process.getuid?.();
      if (!stat.isFile() || (uid !== undefined && stat.uid !== uid) || stat.mode & 0o077) return undefined;
      const value = fs.readFileSync(fd, 'utf8').trim();
      return TOKEN_SHAPE.test(value) ? value : undefined;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
}
