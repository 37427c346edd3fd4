import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_DIR } from './proc';
import { nodeSpec, settings, withServer, type ScenarioResult } from './scenarios';
import { median } from './stats';

/** The built CLI (`npm run build`): the bench compiles only its own tree. */
const CLI_MAIN = path.resolve(BENCH_DIR, '../../../../../dist/cli/main.js');

const fmt = (ms: number) => (Number.isFinite(ms) ? ms.toFixed(0) : 'n/a');

/** Wall milliseconds from spawning `node ARGS` to its exit; rejects on a non-zero exit. */
function wallMs(args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: process.env.PATH },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(performance.now() - started)
        : reject(new Error(`node ${args.join(' ')}: exit ${code}: ${stderr}`)),
    );
  });
}

/**
 * Issue 35: the CLI's start-up, wall time of `lango --version` and of
 * `lango --url URL agents` against a running node, beside the floor of
 * `node -e 0` measured in the same alternating rounds (medians).
 */
export async function cliStartup(): Promise<ScenarioResult> {
  const title = 'CLI start-up: `lango --version` and `lango --url URL agents`, wall time';
  const target = '`--version` ≤ 150 ms, `agents --url` ≤ 400 ms (against a `node -e 0` floor)';
  if (!fs.existsSync(CLI_MAIN))
    return {
      id: 'cliStartup',
      title,
      target,
      baseline: 'n/a',
      node: 'n/a',
      ratio: 'n/a',
      met: undefined,
      notes: [`not measured: ${CLI_MAIN} is missing (npm run build first)`],
    };
  return withServer(nodeSpec(), async (node) => {
    const rounds = Math.max(10, settings.runs * 5);
    const floor: number[] = [];
    const version: number[] = [];
    const agents: number[] = [];
    for (let i = 0; i < rounds; i++) {
      floor.push(await wallMs(['-e', '0']));
      version.push(await wallMs([CLI_MAIN, '--version']));
      agents.push(await wallMs([CLI_MAIN, '--url', node.url, 'agents']));
    }
    const [f, v, a] = [median(floor), median(version), median(agents)];
    return {
      id: 'cliStartup',
      title,
      target,
      baseline: `node -e 0: ${fmt(f)} ms`,
      node: `--version ${fmt(v)} ms, agents --url ${fmt(a)} ms`,
      ratio: `${fmt(v - f)} ms and ${fmt(a - f)} ms over the floor`,
      met: v <= 150 && a <= 400,
      notes: [`${rounds} alternating rounds; medians`, `agents --url asks a running node (offline model) for its tree`],
    };
  });
}
