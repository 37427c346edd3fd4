import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time of one owner (ours, the SDK, a library, Node itself) or one function, as a share of the profile. */
export interface ProfileShare {
  name: string;
  percent: number;
}

/** Where a `--cpu-prof` profile spent its self time, by owner and by function. */
export interface ProfileSummary {
  file: string;
  /** Milliseconds at the start of the profile left out (start-up, before the server was ready). */
  skippedMs?: number;
  owners: ProfileShare[];
  functions: ProfileShare[];
}

const OWNERS: Array<[RegExp, string]> = [
  [/\/node_modules\/@a2a-js\/sdk/, '@a2a-js/sdk'],
  [/\/node_modules\/kysely\//, 'kysely (driver of the SDK DatabaseTaskStore)'],
  [/\.build\/src\//, 'lango (src/)'],
  [/\.build\/scripts\//, 'bench entry'],
  [/node_modules\/better-sqlite3\//, 'better-sqlite3'],
  [
    /node_modules\/(express|router|body-parser|raw-body|send|finalhandler|path-to-regexp|cors|on-finished)\//,
    'express',
  ],
  [/node_modules\/zod\//, 'zod'],
  [/node_modules\/winston|logform/, 'winston'],
  [/node_modules\//, 'other packages'],
];

function ownerOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? `node ${functionName}` : 'node native (I/O, SQLite calls, JSON)';
  if (url.startsWith('node:')) return 'node core';
  for (const [pattern, owner] of OWNERS) if (pattern.test(url)) return owner;
  return 'other';
}

/**
 * Reads the newest main-thread `.cpuprofile` in `dir` and sums self time by
 * owner and by function. Node writes one file per thread,
 * `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`; thread 0 is the event
 * loop (the node's WAL checkpointer is a worker thread with its own file).
 */
export function summarizeProfile(dir: string, skipMs = 0, top = 8): ProfileSummary | undefined {
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
  const mainThread = files.filter((f) => f.split('.')[4] === '0');
  const chosen = (mainThread.length ? mainThread : files).sort().at(-1);
  return chosen ? summarizeProfileFile(path.join(dir, chosen), skipMs, top) : undefined;
}

/** Sums the self time of one `.cpuprofile` file by owner and by function, after its first `skipMs`. */
export function summarizeProfileFile(file: string, skipMs = 0, top = 8): ProfileSummary {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  let elapsedUs = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const dt = profile.timeDeltas[i] ?? 0;
    elapsedUs += dt;
    if (elapsedUs < skipMs * 1000) return;
    if (!node || node.callFrame.functionName === '(idle)') return;
    total += dt;
    const { url, functionName, lineNumber } = node.callFrame;
    const owner = ownerOf(url, functionName);
    owners.set(owner, (owners.get(owner) ?? 0) + dt);
    const where = url ? `${url.replace(/^.*node_modules\//, '').replace(/^.*\.build\//, '')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    functions.set(key, (functions.get(key) ?? 0) + dt);
  });
  const shares = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, t]) => ({ name, percent: Math.round((1000 * t) / total) / 10 }));
  return {
    file,
    ...(skipMs ? { skippedMs: Math.round(skipMs) } : {}),
    owners: shares(owners),
    functions: shares(functions),
  };
}
