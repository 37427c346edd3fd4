/**
 * `npm run bench`: every scenario of issue 7 against the bare SDK baseline,
 * then docs/benchmarks.md (plus ANALYSIS from scripts/bench/analysis.md, the
 * hand-written reading of misses). Not part of `npm test`.
 *
 * BENCH_ONLY=greeting,card runs a subset; BENCH_RUNS, BENCH_DURATION,
 * BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_MEMORY_TASKS, BENCH_CARD_TIMEOUT_MS
 * and BENCH_PROFILE=0 tune it (see scenarios.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describeMachine, renderReport } from './report';
import { card, delegated, greeting, hop, memory, settings, startup, streaming, type ScenarioResult } from './scenarios';

const SCENARIOS: Record<string, () => Promise<ScenarioResult>> = { greeting, delegated, card, streaming, memory, startup, hop };

async function main(): Promise<void> {
  const startedAt = new Date();
  const machine = describeMachine();
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
  const results: ScenarioResult[] = [];
  for (const [name, run] of Object.entries(SCENARIOS)) {
    if (only && !only.includes(name)) continue;
    const t0 = Date.now();
    process.stdout.write(`\n== ${name}\n`);
    try {
      const result = await run();
      results.push(result);
      process.stdout.write(
        `${result.title}\n  target   ${result.target}\n  baseline ${result.baseline}\n  node     ${result.node}\n  ratio    ${result.ratio}\n  result   ${result.met === undefined ? 'not measured' : result.met ? 'met' : 'MISSED'} (${Math.round((Date.now() - t0) / 1000)} s)\n`,
      );
      for (const note of result.notes) process.stdout.write(`  - ${note}\n`);
      for (const owner of result.profile?.owners ?? []) process.stdout.write(`  profile: ${owner.name} ${owner.percent}%\n`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      process.stdout.write(`  failed to run: ${message}\n`);
      results.push({ id: name, title: name, target: '', baseline: '', node: '', ratio: '', met: false, notes: [`the scenario failed to run: ${message.slice(0, 500)}`] });
    }
  }
  const seconds = (Date.now() - startedAt.getTime()) / 1000;
  let text = renderReport({ machine, results, settings, startedAt, seconds });
  const analysis = path.join(process.cwd(), 'scripts/bench/analysis.md');
  if (fs.existsSync(analysis)) text += `\n${fs.readFileSync(analysis, 'utf8')}`;
  if (!only) {
    fs.mkdirSync(path.join(process.cwd(), 'docs'), { recursive: true });
    fs.writeFileSync(path.join(process.cwd(), 'docs/benchmarks.md'), text);
    process.stdout.write(`\nwrote docs/benchmarks.md (${Math.round(seconds)} s)\n`);
  } else {
    process.stdout.write(`\nsubset run (${Math.round(seconds)} s): docs/benchmarks.md left as it was\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
