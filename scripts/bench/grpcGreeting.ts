import type { LoadResult } from './loadClient';
import { runClient, type ServerProcess } from './proc';
import {
  baselineSpec,
  describeLoad,
  httpWindow,
  loadNotes,
  medians,
  nodeSpec,
  paired,
  pairedRatio,
  settings,
  type MeasuredLoad,
  type ScenarioResult,
} from './scenarios';

const fmt = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

/**
 * One measured window of gRPC `SendMessage` greetings against the server's
 * gRPC address, from a client process of its own (as `load` is for HTTP),
 * with the server's CPU time per call read around it.
 */
async function grpcWindow(server: ServerProcess, durationSec: number): Promise<MeasuredLoad> {
  const target = server.ready.grpcAddress;
  if (typeof target !== 'string') throw new Error('the server serves no gRPC (no grpcAddress in its ready line)');
  const env = { TARGET: target, C: String(settings.connections), TEXT: 'hi', WARMUP: '0' };
  const cpuBefore = server.cpuMs();
  const result = await runClient<LoadResult>('grpcLoadClient.js', { ...env, DURATION: String(durationSec) });
  const served = result.ok + result.failed;
  return { ...result, cpuUsPerReq: served ? ((server.cpuMs() - cpuBefore) * 1000) / served : NaN };
}

/** The sides: the SDK's gRPC server, the node's gRPC binding, and the node's JSON-RPC greeting as a reference. */
type GrpcSide = 'baseline' | 'node' | 'node JSON-RPC';

/**
 * The greeting over gRPC: the node's gRPC binding (`server.grpcPort`, the
 * orchestrator on the offline model, the task persisted in SQLite) against
 * the SDK's own gRPC server (a bare `grpcService` over its
 * `DefaultRequestHandler` with an in-memory store), the same load client for
 * both, in paired windows (every server up, each ratio the median of its
 * rounds' ratios; a fresh node compiles its path in its first window, as the
 * greeting's note says). A third side, the node's own JSON-RPC greeting,
 * says what the node's path costs without gRPC's transport: the target asks
 * for the gRPC greeting at 1 / 1.3 of the SDK's gRPC CPU, which the note
 * sets beside it.
 */
export async function grpcGreeting(): Promise<ScenarioResult> {
  const runs = await paired<GrpcSide>(
    {
      baseline: baselineSpec({ GRPC_PORT: '0' }),
      node: nodeSpec({ GRPC_PORT: '0' }),
      'node JSON-RPC': nodeSpec(),
    },
    (side, server, durationSec) =>
      side === 'node JSON-RPC'
        ? httpWindow<GrpcSide>({ KIND: 'send', TEXT: 'hi' })(side, server, durationSec)
        : grpcWindow(server, durationSec),
    Math.max(settings.runs, 5),
  );
  const b = medians(runs.baseline);
  const n = medians(runs.node);
  const jsonRpc = medians(runs['node JSON-RPC']);
  const failures = Object.values(runs)
    .flat()
    .reduce((sum, r) => sum + r.failed, 0);
  const ratio = pairedRatio(runs.node, runs.baseline, (r) => r.okPerSec);
  const cpu = pairedRatio(runs.node, runs.baseline, (r) => r.cpuUsPerReq);
  return {
    id: 'grpcGreeting',
    title: '`SendMessage` over gRPC, greeting answered by the orchestrator (offline model), task persisted',
    target: "≥ 1.3 × the SDK's own gRPC server: req/s, and CPU/req ≤ 1 / 1.3 of its (issue 35)",
    baseline: describeLoad(b),
    node: describeLoad(n),
    ratio: `${fmt(ratio, 2)} × req/s, ${fmt(cpu, 2)} × CPU/req, medians of paired windows`,
    met: ratio >= 1.3 && cpu * 1.3 <= 1 && failures === 0,
    notes: [
      ...loadNotes(runs),
      `reference: the target needs the node's gRPC greeting at ≤ ${fmt(b.cpu / 1.3)} µs CPU/req (the SDK's gRPC server's ${fmt(b.cpu)} ÷ 1.3); the node's JSON-RPC greeting, the same path without gRPC's transport, costs ${fmt(jsonRpc.cpu)} µs in the same rounds, and gRPC's transport adds ${fmt(n.cpu - jsonRpc.cpu)} µs to it`,
      `every server up throughout, ${runs.node.length} rounds of one ${settings.durationSec} s window each, the side going first rotating; ratios are medians of each round's pair`,
    ],
  };
}
