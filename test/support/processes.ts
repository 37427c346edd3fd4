import fs from 'node:fs';

/**
 * Pids of live processes whose command line is exactly `command` (give the
 * command a unique marker, e.g. a sleep of an unusual length). Lets a test
 * await "the sandboxed command is running" or "is gone" instead of sleeping.
 */
export function processesWith(command: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (cmdline === command) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * Whether process `pid` has ended: gone from /proc, or a zombie its parent
 * has not reaped yet (it runs nothing any more). Cheap enough to poll every
 * millisecond when a test times how fast something stops it.
 */
export function processEnded(pid: number): boolean {
  try {
    // The state follows the command name, which is in parentheses and may itself hold ") ".
    return fs
      .readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .startsWith('Z');
  } catch {
    return true;
  }
}
