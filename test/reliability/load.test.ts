import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';
import { freePort, spawnServe, type ServeProcess } from '../support/reliabilityProcess';

const STREAMS = 200;
const SENDERS = 8;
const MIB = 1024 * 1024;

/** Resident set size of a process, from /proc (Linux). */
function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kib * 1024;
}

function body(method: string, text: string, id: number): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method,
    params: { message: { messageId: `load-${id}-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] } },
  });
}

const HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0' };

/** One SSE stream; resolves with the state in its last event. */
async function stream(url: string, dispatcher: Agent, id: number): Promise<string> {
  const res = await request(`${url}/`, {
    method: 'POST',
    headers: { ...HEADERS, accept: 'text/event-stream' },
    body: body('SendStreamingMessage', 'hi', id),
    dispatcher,
    bodyTimeout: 30_000,
  });
  const text = await res.body.text();
  const events = text.split('\n\n').filter((e) => e.startsWith('data:'));
  return (
    /TASK_STATE_[A-Z_]+/g.exec(events.at(-1) ?? '')?.[0] ?? `no state (HTTP ${res.statusCode}): ${text.slice(0, 200)}`
  );
}

/** SendMessage traffic until `stop` is set; returns every final state. */
async function steadySender(url: string, dispatcher: Agent, stop: { done: boolean }, base: number): Promise<string[]> {
  const states: string[] = [];
  for (let i = 0; !stop.done; i++) {
    const res = await request(`${url}/`, {
      method: 'POST',
      headers: HEADERS,
      body: body('SendMessage', 'hello', base + i),
      dispatcher,
    });
    const doc = (await res.body.json()) as {
      result?: { task?: { status?: { state?: string } } };
      error?: { message?: string };
    };
    states.push(doc.result?.task?.status?.state ?? `error: ${doc.error?.message}`);
  }
  return states;
}

describe('load: 200 concurrent streams plus steady SendMessage traffic', () => {
  let cwd: string;
  let node: ServeProcess | undefined;

  beforeAll(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-rel-load-'));
    fs.writeFileSync(
      path.join(cwd, 'lango.config.yaml'),
      'dataDir: ./data\nlogLevel: warn\ntools:\n  browser:\n    enabled: false\n',
    );
  });

  afterAll(async () => {
    await node?.kill9();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('answers every stream and every message, leaves no task working and keeps memory flat over three waves', async () => {
    node = await spawnServe({ cwd, configFile: path.join(cwd, 'lango.config.yaml'), port: await freePort() });
    const pid = node.child.pid!;
    const dispatcher = new Agent({ connections: STREAMS + SENDERS, pipelining: 1 });
    const rss: number[] = [];
    let sent = 0;
    try {
      for (let wave = 0; wave < 3; wave++) {
        const stop = { done: false };
        const senders = Array.from({ length: SENDERS }, (_, i) =>
          steadySender(node!.url, dispatcher, stop, (wave * SENDERS + i) * 100_000),
        );
        const states = await Promise.all(
          Array.from({ length: STREAMS }, (_, i) => stream(node!.url, dispatcher, wave * STREAMS + i)),
        );
        stop.done = true;
        const messages = (await Promise.all(senders)).flat();
        sent += messages.length;
        expect(states.filter((s) => s !== 'TASK_STATE_COMPLETED')).toEqual([]);
        expect(messages.filter((s) => s !== 'TASK_STATE_COMPLETED')).toEqual([]);
        rss.push(rssOf(pid));
      }
    } finally {
      await dispatcher.close();
    }
    expect(sent).toBeGreaterThan(SENDERS * 3);
    // The first wave warms caches and the JIT; later waves must not keep growing.
    expect(rss[2] - rss[0]).toBeLessThan(64 * MIB);

    const db = new Database(path.join(cwd, 'data', 'lango.db'), { readonly: true });
    try {
      const counts = db
        .prepare('SELECT status_state AS state, COUNT(*) AS n FROM a2a_tasks GROUP BY status_state')
        .all() as { state: string; n: number }[];
      expect(counts).toEqual([{ state: 'TASK_STATE_COMPLETED', n: 3 * STREAMS + sent }]);
    } finally {
      db.close();
    }
  }, 100_000);
});
