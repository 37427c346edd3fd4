import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';

/** One JSON-RPC request as a child peer reported it. */
export interface ChildSeenRequest {
  method: string;
  params: Record<string, unknown>;
  headers: Record<string, string>;
}

/** A third-party A2A server running in a child process (the packages are ESM). */
export interface ChildPeer {
  /** The base URL it serves A2A on (ends with `/`). */
  url: string;
  /** Requests it received, in order. */
  seen: ChildSeenRequest[];
  /** Ends its stdin (its signal to stop) and waits for it to exit. */
  close(): Promise<void>;
}

/**
 * Starts `node <script> ...args` and resolves once it prints `{"url": ...}`;
 * every later `{"seen": ...}` line is recorded. A peer that does not come up
 * within `timeoutMs` is killed and the start fails with its stderr.
 */
export function startChildPeer(script: string, args: string[] = [], timeoutMs = 20_000): Promise<ChildPeer> {
  const child: ChildProcess = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const seen: ChildSeenRequest[] = [];
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    child.stdin!.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not start within ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}:\n${stderr}`));
    });
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      let parsed: { url?: string; seen?: ChildSeenRequest };
      try {
        parsed = JSON.parse(line);
      } catch {
        return; // the package's own console output
      }
      if (parsed.seen) seen.push(parsed.seen);
      else if (parsed.url) {
        clearTimeout(timer);
        resolve({ url: parsed.url, seen, close });
      }
    });
  });
}

/** Runs `node <script> ...args` to the end and parses each stdout line that is JSON. */
export function runChildClient(script: string, args: string[], timeoutMs = 30_000): Promise<any[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`${script} exited with ${code}:\n${stderr}`));
      const lines: any[] = [];
      for (const line of stdout.split('\n')) {
        try {
          lines.push(JSON.parse(line));
        } catch {
          // the package's own console output
        }
      }
      resolve(lines);
    });
  });
}
