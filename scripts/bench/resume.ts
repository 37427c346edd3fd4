/**
 * Issue 27's scenarios: how fast a cut stream is resumed, and what the
 * generations and send keys cost.
 *
 * - `resumeLatency`: two replicas on one PostgreSQL database stream a
 *   scripted answer; the caller's socket is destroyed after 20 chunks and
 *   `SubscribeToTask` with `Last-Event-ID` goes to the same replica or the
 *   other, alternately. Measured: cut → first resumed event, p50 / p99 each
 *   way; every resumed stream must complete the answer with each chunk once.
 * - `resumeCost`: the greeting's req/s and a stream's server CPU, this
 *   tree against a tree without issue 27 (`BENCH_BASE_TREE`: the compiled
 *   bench folder of that tree, which `scripts/bench/baseTree.sh <ref>`
 *   builds), rounds alternating. Target: greeting ≥ 0.95 × the tree without.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { GENERATION_EXTENSION } from '../../src/protocol/generation';
import { postgresUnavailable } from '../../test/support/postgres';
import { openSse, resultOf, rpc, type SseFrame } from '../../test/support/sse';
import { startReplica, withDatabase, withPostgres } from './cluster';
import { runClient, startServer, type ServerProcess } from './proc';
import {
  alternate,
  describeLoad,
  load,
  loadNotes,
  medians,
  nodeSpec,
  settings,
  withServer,
  type ScenarioResult,
} from './scenarios';
import { median, percentile } from './stats';

const fmt = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

/** Chunks of each scripted answer, and how far apart (a 2 s answer). */
const CHUNKS = 400;
const INTERVAL_MS = 5;
/** After how many chunks the caller's socket is destroyed. */
const CUT_AFTER = 20;
/** Resumes measured, half to each replica (BENCH_RESUMES); one warm-up before. */
const RESUMES = Number(process.env.BENCH_RESUMES ?? 20);

/** The scripted deltas a stream carried, in order (`[[c<seq>@…]]` stamps). */
function chunkSeqs(frames: readonly SseFrame[]): number[] {
  const seqs: number[] = [];
  for (const frame of frames) {
    const parts = resultOf(frame).artifactUpdate?.artifact?.parts as Array<{ text?: string }> | undefined;
    for (const match of (parts ?? [])
      .map((p) => p.text ?? '')
      .join('')
      .matchAll(/\[\[c(\d+)@/g))
      seqs.push(Number(match[1]));
  }
  return seqs;
}

async function readAll(stream: { next(): Promise<SseFrame | undefined> }, until?: (f: SseFrame[]) => boolean) {
  const frames: SseFrame[] = [];
  for (let frame = await stream.next(); frame; frame = await stream.next()) {
    frames.push(frame);
    if (until?.(frames)) break;
  }
  return frames;
}

/** One cut and resume: the ms from the cut to the resumed stream's first event. */
async function cutAndResume(from: ServerProcess, to: ServerProcess): Promise<number> {
  const extension = { 'A2A-Extensions': GENERATION_EXTENSION };
  const params = { message: { messageId: `bench-${performance.now()}`, role: 'ROLE_USER', parts: [{ text: 'go' }] } };
  const stream = await openSse(`${from.url}/`, rpc('SendStreamingMessage', params), extension);
  const before = await readAll(stream, (frames) => chunkSeqs(frames).length >= CUT_AFTER);
  const last = before.at(-1)!;
  const taskId = last.id!.slice(0, last.id!.lastIndexOf(':'));
  stream.cut();
  const cutAt = performance.now();
  const resumed = await openSse(`${to.url}/`, rpc('SubscribeToTask', { id: taskId }), {
    ...extension,
    'Last-Event-ID': last.id!,
  });
  const first = await resumed.next();
  const firstMs = performance.now() - cutAt;
  const after = [first!, ...(await readAll(resumed))];
  const seqs = [...chunkSeqs(before), ...chunkSeqs(after)];
  if (seqs.length !== CHUNKS || seqs.some((seq, i) => seq !== i))
    throw new Error(`a resumed stream carried ${seqs.length} chunks, not each of ${CHUNKS} once in order`);
  if (resultOf(after.at(-1)!).statusUpdate?.status?.state !== 'TASK_STATE_COMPLETED')
    throw new Error('a resumed stream did not end completed');
  return firstMs;
}

/** Resume latency, same replica and another (see the module comment). */
export async function resumeLatency(): Promise<ScenarioResult> {
  return withPostgres(postgresUnavailable(), (pg) =>
    withDatabase(pg, async (databaseUrl) => {
      const model = await startServer({
        script: 'scriptedModel.js',
        env: { CHUNKS: String(CHUNKS), FIRST_MS: '0', INTERVAL_MS: String(INTERVAL_MS) },
      });
      const same: number[] = [];
      const other: number[] = [];
      try {
        const extra = {
          agent: { provider: 'openai', baseUrl: model.url, apiKey: 'bench-key', model: 'scripted', multiAgent: false },
        };
        const a = await startReplica(databaseUrl, 'bench-a', undefined, extra);
        try {
          const b = await startReplica(databaseUrl, 'bench-b', undefined, extra);
          try {
            await cutAndResume(a, a);
            await cutAndResume(a, b);
            for (let run = 0; run < RESUMES; run++) {
              if (run % 2 === 0) same.push(await cutAndResume(a, a));
              else other.push(await cutAndResume(a, b));
            }
          } finally {
            await b.stop();
          }
        } finally {
          await a.stop();
        }
      } finally {
        await model.stop();
      }
      const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y);
      const describe = (who: string, xs: number[]) =>
        `${who}: p50 ${fmt(percentile(sorted(xs), 50), 1)} ms, p99 ${fmt(percentile(sorted(xs), 99), 1)} ms`;
      return {
        id: 'resumeLatency',
        title: `resume a cut stream: socket destroyed after ${CUT_AFTER} of ${CHUNKS} chunks, \`SubscribeToTask\` with \`Last-Event-ID\` (${RESUMES} resumes, two replicas on PostgreSQL)`,
        target: 'reported (no target): cut → first resumed event',
        baseline: describe('same replica', same),
        node: describe('other replica', other),
        ratio: `${fmt(median(other) / median(same), 2)} × p50 (other vs same)`,
        met: undefined,
        notes: [
          `same replica, ms: ${sorted(same)
            .map((x) => fmt(x, 1))
            .join(', ')}`,
          `other replica, ms: ${sorted(other)
            .map((x) => fmt(x, 1))
            .join(', ')}`,
          `every resumed stream carried each of the ${CHUNKS} chunks once, in order, and ended completed; one warm-up each way before`,
        ],
      };
    }),
  );
}

interface StreamCost {
  ok: number;
  failed: number;
  cpuUsPerStream: number;
}

/** Greeting req/s and stream CPU, this tree against the tree without issue 27 (see the module comment). */
export async function resumeCost(): Promise<ScenarioResult> {
  const title = `the cost of generations and send keys: greeting req/s and stream CPU (${settings.runs} alternating rounds)`;
  const target = 'greeting ≥ 0.95 × req/s of the tree without them; stream CPU reported';
  const base = process.env.BENCH_BASE_TREE;
  // A comparison with an older tree runs only where one is built: not run is not judged, not missed.
  if (!base)
    return {
      id: 'resumeCost',
      title,
      target,
      baseline: 'not run',
      node: 'not run',
      ratio: '—',
      met: undefined,
      notes: [
        'not run: set BENCH_BASE_TREE to the compiled bench folder of a tree without issue 27 (scripts/bench/baseTree.sh)',
      ],
    };
  const without = () => ({ ...nodeSpec(), script: path.join(base, 'nodeEntry.js') });
  const greetingEnv = { KIND: 'send', TEXT: 'hi' };
  const greetings = await alternate({
    'without generations and send keys': () => withServer(without(), (s) => load(s, greetingEnv)),
    'with them': () => withServer(nodeSpec(), (s) => load(s, greetingEnv)),
  });
  const stream = async (s: ServerProcess): Promise<StreamCost> => {
    const cpuBefore = s.cpuMs();
    const r = await runClient<{ ok: number; failed: number }>('streamClient.js', {
      URL: `${s.url}/`,
      N: '200',
      C: '20',
      TEXT: 'hi',
    });
    return { ...r, cpuUsPerStream: ((s.cpuMs() - cpuBefore) * 1000) / Math.max(1, r.ok + r.failed) };
  };
  const streams = await alternate({
    without: () => withServer(without(), stream),
    with: () => withServer(nodeSpec(), stream),
  });
  const off = medians(greetings['without generations and send keys']);
  const on = medians(greetings['with them']);
  const cpu = (runs: StreamCost[]) => median(runs.map((r) => r.cpuUsPerStream));
  const failures = [...Object.values(greetings).flat(), ...Object.values(streams).flat()].reduce(
    (sum, r) => sum + r.failed,
    0,
  );
  const ratio = on.rps / off.rps;
  return {
    id: 'resumeCost',
    title,
    target,
    baseline: `without: ${describeLoad(off)}; ${fmt(cpu(streams.without))} µs CPU/stream`,
    node: `with: ${describeLoad(on)}; ${fmt(cpu(streams.with))} µs CPU/stream`,
    ratio: `${fmt(ratio, 2)} × req/s, ${fmt(on.cpu / off.cpu, 2)} × CPU/req; ${fmt(cpu(streams.with) / cpu(streams.without), 2)} × CPU/stream`,
    met: ratio >= 0.95 && failures === 0,
    notes: [
      ...loadNotes(greetings),
      `streams without, µs CPU/stream: ${streams.without.map((r) => fmt(r.cpuUsPerStream)).join(', ')}`,
      `streams with, µs CPU/stream: ${streams.with.map((r) => fmt(r.cpuUsPerStream)).join(', ')}`,
      `tree without: ${base}`,
    ],
  };
}
