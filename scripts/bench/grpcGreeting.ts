import type { LoadResult } from './loadClient';
import { runClient, type ServerProcess } from './proc';
import {
  alternate,
  baselineSpec,
  describeLoad,
  loadNotes,
  medians,
  nodeSpec,
  settings,
  withServer,
  type MeasuredLoad,
  type ScenarioResult,
} from './scenarios';

const fmt = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

/**
 * Warm-up (unmeasured) then the measured window of gRPC `SendMessage`
 * greetings against the server's gRPC address, as two client processes so
 * the server's CPU time can be read between them (as `load` does for HTTP).
 */
async function grpcLoad(server: ServerProcess): Promise<MeasuredLoad> {
  const target = server.ready.grpcAddress;
  if (typeof target !== 'string') throw new Error('the server serves no gRPC (no grpcAddress in its ready line)');
  const env = { TARGET: target, C: String(settings.connections), TEXT: 'hi', WARMUP: '0' };
  if (settings.warmupSec > 0)
    await runClient<LoadResult>('grpcLoadClient.js', { ...env, DURATION: String(settings.warmupSec) });
  const cpuBefore = server.cpuMs();
  const result = await runClient<LoadResult>('grpcLoadClient.js', { ...env, DURATION: String(settings.durationSec) });
  const served = result.ok + result.failed;
  return { ...result, cpuUsPerReq: served ? ((server.cpuMs() - cpuBefore) * 1000) / served : NaN };
}

/**
 * The greeting over gRPC: the node's gRPC binding (`server.grpcPort`, the
 * orchestrator on the offline model, the task persisted in SQLite) against
 * the SDK's own gRPC server (a bare `grpcService` over its
 * `DefaultRequestHandler` with an in-memory store), alternated in one run,
 * the same load client for both.
 */
export async function grpcGreeting(): Promise<ScenarioResult> {
  const runs = await alternate({
    baseline: () => withServer(baselineSpec({ GRPC_PORT: '0' }), grpcLoad),
    node: () => withServer(nodeSpec({ GRPC_PORT: '0' }), grpcLoad),
  });
  const b = medians(runs.baseline);
  const n = medians(runs.node);
  const failures = [...runs.node, ...runs.baseline].reduce((sum, r) => sum + r.failed, 0);
  const ratio = n.rps / b.rps;
  return {
    id: 'grpcGreeting',
    title: '`SendMessage` over gRPC, greeting answered by the orchestrator (offline model), task persisted',
    target: "≥ 1.3 × the SDK's own gRPC server: req/s, and CPU/req ≤ 1 / 1.3 of its (issue 35)",
    baseline: describeLoad(b),
    node: describeLoad(n),
    ratio: `${fmt(ratio, 2)} × req/s, ${fmt(n.p99 / b.p99, 2)} × p99, ${fmt(n.cpu / b.cpu, 2)} × CPU/req`,
    met: ratio >= 1.3 && n.cpu * 1.3 <= b.cpu && failures === 0,
    notes: loadNotes(runs),
  };
}
