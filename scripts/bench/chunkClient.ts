/**
 * Streamed-answer client, run as its own process: N `SendStreamingMessage`
 * streams, all open at once (started evenly over RAMP_MS), or at most C at a
 * time when C is set. At most CONNECTING (256) requests wait for their
 * response headers at once: a burst of thousands of new connections would
 * overflow the server's listen backlog (Node's default is 511) and come back
 * as ECONNRESET, which says nothing about the server once it has accepted. The answering model is scripts/bench/scriptedModel.ts,
 * whose every token is a stamp `[[c<seq>@<ms>]]` of when it was written; for
 * each stamp this client keeps the first event it arrived in, and its delivery
 * latency (arrival − stamp, both on the machine's wall clock).
 *
 * A stream is ok when it is an event stream that ends with a completed task
 * and carried all CHUNKS stamps. "Streamed" says whether the stamps arrived
 * one per event as the model wrote them, or together (the answer sent whole
 * at the end). Prints one JSON line: {@link ChunkRunResult}.
 *   URL=http://127.0.0.1:4000/ N=2000 RAMP_MS=1000 CHUNKS=20 node chunkClient.js
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { percentile, wallClockMs } from './stats';

const url = process.env.URL ?? 'http://127.0.0.1:4000/';
const total = Number(process.env.N ?? 100);
const concurrency = Number(process.env.C ?? total);
const rampMs = Number(process.env.RAMP_MS ?? 0);
const chunks = Number(process.env.CHUNKS ?? 20);
const text = process.env.TEXT ?? 'tell me a story';
const connecting = Number(process.env.CONNECTING ?? 256);
const dispatcher = new Agent({ connections: concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
const headers = { 'content-type': 'application/json', accept: 'text/event-stream', 'a2a-version': '1.0' };
const STAMP = /\[\[c(\d+)@(\d+(?:\.\d+)?)\]\]/g;
/** The v1.0 stream response's one field (`{"result":{"artifactUpdate":…}}`), or the v0.3 `kind`. */
const KIND =
  /"result":\{"(task|message|statusUpdate|artifactUpdate)"|"kind":"(task|message|status-update|artifact-update)"/;

/** What one run measured. */
export interface ChunkRunResult {
  ok: number;
  failed: number;
  chunksExpected: number;
  chunksSeen: number;
  /** SSE events received, by kind. */
  events: Record<string, number>;
  /** Stamps by the kind of event that first carried them. */
  stampCarriers: Record<string, number>;
  /** Share of stamps that arrived alone in their event (1: one event per model token). */
  streamedShare: number;
  firstP50: number;
  firstP99: number;
  laterP50: number;
  laterP99: number;
  allP50: number;
  allP99: number;
  /** Most streams open (response headers received, not finished) at the same moment. */
  maxOpen: number;
  wallMs: number;
  sample?: string;
}

interface StreamOutcome {
  ok: boolean;
  why?: string;
  first: number[];
  later: number[];
  alone: number;
  seen: number;
}

const events: Record<string, number> = {};
const carriers: Record<string, number> = {};
let openStreams = 0;
let maxOpen = 0;

/** Lanes waiting for a connecting slot, and the slots in use. */
const slotWaiters: Array<() => void> = [];
let slotsInUse = 0;

async function connectSlot(): Promise<() => void> {
  if (slotsInUse >= connecting) await new Promise<void>((resolve) => slotWaiters.push(resolve));
  else slotsInUse++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = slotWaiters.shift();
    if (next) next();
    else slotsInUse--;
  };
}

function onEvent(data: string, seen: Set<number>, outcome: StreamOutcome, arrived: number): void {
  const match = KIND.exec(data);
  const kind = match?.[1] ?? match?.[2] ?? 'other';
  events[kind] = (events[kind] ?? 0) + 1;
  let fresh = 0;
  const stamps: Array<[number, number]> = [];
  for (const m of data.matchAll(STAMP)) {
    const seq = Number(m[1]);
    if (seen.has(seq)) continue;
    seen.add(seq);
    stamps.push([seq, Number(m[2])]);
    fresh++;
  }
  for (const [seq, stamp] of stamps) {
    (seq === 0 ? outcome.first : outcome.later).push(arrived - stamp);
    carriers[kind] = (carriers[kind] ?? 0) + 1;
  }
  if (fresh === 1) outcome.alone++;
}

async function one(i: number): Promise<StreamOutcome> {
  const outcome: StreamOutcome = { ok: false, first: [], later: [], alone: 0, seen: 0 };
  const seen = new Set<number>();
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: i,
    method: 'SendStreamingMessage',
    params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } },
  });
  const release = await connectSlot();
  let open = false;
  try {
    const res = await request(url, { method: 'POST', headers, body, dispatcher });
    release();
    open = true;
    openStreams++;
    maxOpen = Math.max(maxOpen, openStreams);
    let buf = '';
    let last = '';
    for await (const part of res.body) {
      const arrived = wallClockMs();
      buf += (part as Buffer).toString('utf8');
      let idx: number;
      while ((idx = buf.indexOf('\n\n')) >= 0) {
        const event = buf.slice(0, idx);
        buf = buf.slice(idx + 2);
        if (!event.startsWith('data:')) continue;
        last = event;
        onEvent(event, seen, outcome, arrived);
      }
    }
    outcome.seen = seen.size;
    const isStream = res.statusCode === 200 && String(res.headers['content-type']).startsWith('text/event-stream');
    const completed = last.includes('TASK_STATE_COMPLETED') || last.includes('"completed"');
    outcome.ok = isStream && completed && seen.size === chunks;
    if (!outcome.ok)
      outcome.why = `HTTP ${res.statusCode}, ${seen.size}/${chunks} chunks, last event: ${last.slice(0, 300)}`;
  } catch (err) {
    outcome.why = err instanceof Error ? err.message : String(err);
  } finally {
    release();
    if (open) openStreams--;
  }
  return outcome;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const t0 = wallClockMs();
  const outcomes: StreamOutcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async (_, lane) => {
      if (rampMs) await sleep((lane * rampMs) / Math.min(concurrency, total));
      for (let i = next++; i < total; i = next++) outcomes.push(await one(i));
    }),
  );
  const wallMs = wallClockMs() - t0;
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  const first = sorted(outcomes.flatMap((o) => o.first));
  const later = sorted(outcomes.flatMap((o) => o.later));
  const all = sorted([...first, ...later]);
  const round = (x: number) => Math.round(x * 100) / 100;
  const seen = outcomes.reduce((sum, o) => sum + o.seen, 0);
  const failed = outcomes.filter((o) => !o.ok);
  const out: ChunkRunResult = {
    ok: outcomes.length - failed.length,
    failed: failed.length,
    chunksExpected: total * chunks,
    chunksSeen: seen,
    events,
    stampCarriers: carriers,
    streamedShare: seen ? round(outcomes.reduce((sum, o) => sum + o.alone, 0) / seen) : 0,
    firstP50: round(percentile(first, 50)),
    firstP99: round(percentile(first, 99)),
    laterP50: round(percentile(later, 50)),
    laterP99: round(percentile(later, 99)),
    allP50: round(percentile(all, 50)),
    allP99: round(percentile(all, 99)),
    maxOpen,
    wallMs: Math.round(wallMs),
    ...(failed[0]?.why ? { sample: failed[0].why } : {}),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  await dispatcher.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`chunk client failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
