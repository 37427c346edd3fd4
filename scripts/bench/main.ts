/**
 * `npm run bench`: every scenario of issues 7, 12, 15, 16 (cluster.ts), 26 (identity.ts), 33 (delegation.ts) and the
 * figures the tests left to the bench (issue 36, waits.ts) against the bare SDK
 * baseline (and Google ADK-JS's A2A server), then docs/benchmarks.md (plus
 * scripts/bench/analysis.md, the hand-written reading of the figures). Not
 * part of `npm test`.
 *
 * BENCH_ONLY=greeting,card runs a subset (also `npm run bench -- greeting card`);
 * BENCH_RUNS, BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS,
 * BENCH_MEMORY_TASKS, BENCH_CONCURRENT_STREAMS, BENCH_CARD_TIMEOUT_MS and
 * BENCH_PROFILE=0 tune it (see scenarios.ts). BENCH_UPDATE=1 with a subset
 * puts its results in place of those scenarios' in the last full run and
 * writes docs/benchmarks.md again (each scenario keeps the load average it
 * ran under).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  cancelPropagation,
  cluster,
  cronLateness,
  pgGreeting,
  replicaLoss,
  resubscribeElsewhere,
  resubscribeLongAnswer,
} from './cluster';
import { grpcGreeting } from './grpcGreeting';
import { cliStartup } from './cliStartup';
import { oidcGreeting } from './identity';
import { accounting, onBehalfOf, onBehalfOfHop } from './delegation';
import { resumeCost, resumeLatency } from './resume';
import { databaseOutage, peerHealth } from './waits';
import { summarizeProfileFile } from './profile';
import { describeMachine, renderReport } from './report';
import {
  adk,
  card,
  concurrentStreams,
  delegated,
  firstChunk,
  greeting,
  hop,
  memory,
  observeOff,
  settings,
  startup,
  streaming,
  type ScenarioResult,
} from './scenarios';

const SCENARIOS: Record<string, () => Promise<ScenarioResult>> = {
  greeting,
  grpcGreeting,
  observeOff,
  delegated,
  adk,
  card,
  streaming,
  firstChunk,
  concurrentStreams,
  memory,
  startup,
  hop,
  pgGreeting,
  cluster,
  replicaLoss,
  cronLateness,
  cancelPropagation,
  resubscribeElsewhere,
  resubscribeLongAnswer,
  oidcGreeting,
  onBehalfOf,
  onBehalfOfHop,
  accounting,
  resumeLatency,
  resumeCost,
  peerHealth,
  databaseOutage,
  cliStartup,
};

/** The 1-, 5- and 15-minute load averages, as printed next to every scenario. */
const loadAverage = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');

/** Where the last full run's figures are kept, so the report can be re-rendered (BENCH_RERENDER=1) after editing analysis.md. */
const LAST_RUN = path.join(process.cwd(), 'scripts/bench/.build/last-run.json');

function writeReport(text: string): void {
  fs.mkdirSync(path.join(process.cwd(), 'docs'), { recursive: true });
  fs.writeFileSync(path.join(process.cwd(), 'docs/benchmarks.md'), text);
}

function withAnalysis(text: string): string {
  const analysis = path.join(process.cwd(), 'scripts/bench/analysis.md');
  return fs.existsSync(analysis) ? `${text}\n${fs.readFileSync(analysis, 'utf8')}` : text;
}

async function main(): Promise<void> {
  if (process.env.BENCH_RERENDER) {
    const last = JSON.parse(fs.readFileSync(LAST_RUN, 'utf8')) as Parameters<typeof renderReport>[0] & {
      startedAt: string;
    };
    // Profiles are summarized again, so a change to the owner table applies to the kept profiles.
    for (const result of last.results) {
      if (result.profile && fs.existsSync(result.profile.file))
        result.profile = {
          ...summarizeProfileFile(result.profile.file, result.profile.skippedMs),
          file: result.profile.file,
        };
    }
    writeReport(withAnalysis(renderReport({ ...last, startedAt: new Date(last.startedAt) })));
    process.stdout.write('re-rendered docs/benchmarks.md from the last run\n');
    return;
  }
  const startedAt = new Date();
  const machine = describeMachine();
  const named = process.argv.slice(2);
  const only = named.length ? named : process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
  const unknown = only?.filter((name) => !(name in SCENARIOS)) ?? [];
  if (unknown.length) {
    process.stderr.write(`unknown scenario ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}\n`);
    process.exit(2);
  }
  const results: ScenarioResult[] = [];
  for (const [name, run] of Object.entries(SCENARIOS)) {
    if (only && !only.includes(name)) continue;
    const t0 = Date.now();
    const loadBefore = loadAverage();
    process.stdout.write(`\n== ${name} (load average ${loadBefore})\n`);
    try {
      const result = await run();
      result.notes.push(`load average (1 / 5 / 15 min) before ${loadBefore}, after ${loadAverage()}`);
      results.push(result);
      process.stdout.write(
        `${result.title}\n  target   ${result.target}\n  baseline ${result.baseline}\n  node     ${result.node}\n  ratio    ${result.ratio}\n  result   ${result.met === undefined ? 'not judged' : result.met ? 'met' : 'MISSED'} (${Math.round((Date.now() - t0) / 1000)} s)\n`,
      );
      for (const note of result.notes) process.stdout.write(`  - ${note}\n`);
      for (const owner of result.profile?.owners ?? [])
        process.stdout.write(`  profile: ${owner.name} ${owner.percent}%\n`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      process.stdout.write(`  failed to run: ${message}\n`);
      results.push({
        id: name,
        title: name,
        target: '',
        baseline: '',
        node: '',
        ratio: '',
        met: false,
        notes: [`the scenario failed to run: ${message.slice(0, 500)}`],
      });
    }
  }
  const seconds = (Date.now() - startedAt.getTime()) / 1000;
  machine.loadAverageAtEnd = loadAverage();
  process.stdout.write(`\nload average at start ${machine.loadAverage}, at end ${machine.loadAverageAtEnd}\n`);
  const text = withAnalysis(renderReport({ machine, results, settings, startedAt, seconds }));
  if (!only) {
    fs.mkdirSync(path.dirname(LAST_RUN), { recursive: true });
    fs.writeFileSync(LAST_RUN, JSON.stringify({ machine, results, settings, startedAt, seconds }));
    writeReport(text);
    process.stdout.write(`\nwrote docs/benchmarks.md (${Math.round(seconds)} s)\n`);
  } else if (process.env.BENCH_UPDATE) {
    const last = JSON.parse(fs.readFileSync(LAST_RUN, 'utf8')) as Parameters<typeof renderReport>[0] & {
      startedAt: string;
    };
    const fresh = new Map(results.map((r) => [r.id, r]));
    last.results = last.results.map((r) => {
      const update = fresh.get(r.id);
      return update
        ? { ...update, notes: [...update.notes, `re-run on ${startedAt.toISOString()} (BENCH_UPDATE)`] }
        : r;
    });
    fs.writeFileSync(LAST_RUN, JSON.stringify(last));
    writeReport(withAnalysis(renderReport({ ...last, startedAt: new Date(last.startedAt) })));
    process.stdout.write(
      `\nsubset run (${Math.round(seconds)} s): its results replace the last run's in docs/benchmarks.md\n`,
    );
  } else {
    process.stdout.write(`\nsubset run (${Math.round(seconds)} s): docs/benchmarks.md left as it was\n`);
  }
}

let finished = false;
// A scenario waiting on a dead child would otherwise let the event loop drain and exit 0 silently.
process.on('beforeExit', () => {
  if (finished) return;
  process.stderr.write('bench stopped before finishing: a scenario waited on something that will never answer\n');
  process.exit(1);
});

main()
  .then(() => {
    finished = true;
  })
  .catch((err: unknown) => {
    finished = true;
    process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
