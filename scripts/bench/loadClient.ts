/**
 * Load client, run as its own process so it never shares an event loop with
 * the server: autocannon (programmatic API) against URL with C connections,
 * WARMUP seconds discarded, then DURATION seconds (or AMOUNT requests)
 * measured. Successes are counted from the response bodies (JSON-RPC errors
 * are HTTP 200). Prints one JSON line: {@link LoadResult}.
 *
 *   KIND=send URL=http://127.0.0.1:4000/ TEXT=hi C=50 DURATION=5 WARMUP=2 node loadClient.js
 *   KIND=card URL=http://127.0.0.1:4000/.well-known/agent-card.json ...
 *   PROTOCOL=v03 sends v0.3 `message/send` with no A2A-Version header (ADK-JS speaks only v0.3).
 *   AUTHORIZATION='Bearer …' sends that header with every request (a node with `a2a.auth`).
 */
import { randomUUID } from 'node:crypto';
import { judgeResponse, type ResponseKind } from './judge';

// autocannon ships no types; this is the part of its API used here.
interface AutocannonRequest {
  method: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: AutocannonRequest) => AutocannonRequest;
  onResponse?: (status: number, body: string) => void;
}
interface AutocannonResult {
  requests: { total: number };
  latency: { p50: number; p99: number; average: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  duration: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as Autocannon;

/** What one load run measured. */
export interface LoadResult {
  ok: number;
  failed: number;
  /** Successful responses per second over the measured window. */
  okPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  durationSec: number;
  /** First failed body (trimmed), to say why. */
  sample?: string;
}

const kind = (process.env.KIND ?? 'send') as ResponseKind;
const url = new URL(process.env.URL ?? 'http://127.0.0.1:4000/');
const connections = Number(process.env.C ?? 50);
const duration = Number(process.env.DURATION ?? 5);
const warmup = Number(process.env.WARMUP ?? 2);
const amount = process.env.AMOUNT ? Number(process.env.AMOUNT) : undefined;
const text = process.env.TEXT ?? 'hi';
const legacy = process.env.PROTOCOL === 'v03';
/** A2A-Version header on every request; empty: none (a v0.3 client). */
const version = process.env.A2A_VERSION ?? (legacy ? '' : '1.0');
const versionHeader: Record<string, string> = {
  ...(version ? { 'a2a-version': version } : {}),
  ...(process.env.AUTHORIZATION ? { authorization: process.env.AUTHORIZATION } : {}),
};

function sendBody(): string {
  if (legacy)
    return JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] } },
    });
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } },
  });
}

function request(counter?: { ok: number; failed: number; sample?: string }): AutocannonRequest {
  const judge = (status: number, body: string) => {
    if (!counter) return;
    if (judgeResponse(kind, status, body)) counter.ok++;
    else {
      counter.failed++;
      counter.sample ??= `${status} ${body.slice(0, 300)}`;
    }
  };
  if (kind === 'card') return { method: 'GET', path: url.pathname, headers: versionHeader, onResponse: judge };
  return {
    method: 'POST',
    path: url.pathname,
    headers: { 'content-type': 'application/json', ...versionHeader },
    setupRequest: (req) => ({ ...req, body: sendBody() }),
    onResponse: judge,
  };
}

async function main(): Promise<void> {
  const base = { url: url.origin, connections, pipelining: 1 };
  if (warmup > 0 && !amount) await autocannon({ ...base, duration: warmup, requests: [request()] });
  const counter = { ok: 0, failed: 0, sample: undefined as string | undefined };
  const started = Date.now();
  const result = await autocannon({
    ...base,
    ...(amount ? { amount } : { duration }),
    timeout: 30,
    requests: [request(counter)],
  });
  const durationSec = (Date.now() - started) / 1000;
  const out: LoadResult = {
    ok: counter.ok,
    failed: counter.failed + result.errors + result.timeouts,
    okPerSec: Math.round(counter.ok / durationSec),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    durationSec: Math.round(durationSec * 10) / 10,
    ...(counter.sample ? { sample: counter.sample } : {}),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`load client failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
