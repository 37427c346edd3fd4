import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';

/** A whole node (createApp) running in this process on 127.0.0.1 port 0 over a temp data dir. */
export interface ReliabilityNode {
  url: string;
  app: LangoApp;
  dir: string;
  logger: MemoryLogger;
  /** Closes the node and removes its data dir. */
  close(): Promise<void>;
}

/**
 * Starts a node from the real composition root with the offline model (or
 * the `agent` its config names: the scripted server), the browser family off (no Chromium in unit tests) and a memory
 * logger, so reliability tests exercise exactly what `lango serve` runs.
 */
export async function startReliabilityNode(options: { config?: LangoConfigInput } = {}): Promise<ReliabilityNode> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-rel-'));
  const input = options.config ?? {};
  const config = resolveConfig({
    ...input,
    server: { host: '127.0.0.1', port: 0 },
    dataDir: dir,
    logLevel: 'warn',
    tools: { ...input.tools, browser: { enabled: false } },
  });
  const logger = createMemoryLogger();
  const app = await createApp(config, { logger });
  const url = await app.listen();
  return {
    url,
    app,
    dir,
    logger,
    close: async () => {
      await app.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** mulberry32: a tiny seeded PRNG so every generated request reproduces from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A `SendMessage` v1.0 JSON-RPC body with a fresh message id. */
export function sendMessageBody(text: string, id: number | string = 1, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'SendMessage',
    params: {
      message: { messageId: `m-${Date.now()}-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }], ...extra },
    },
  });
}

/** Posts one v1.0 JSON-RPC request and returns the parsed body. */
export async function rpc(url: string, body: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** How one message to a node ended: its final state and every text it carries. */
export interface NodeAnswer {
  state: string;
  text: string;
}

/** Sends one message to the node and reads the final state and every text it carries (artifacts, status message, error). */
export async function askNode(node: { url: string }, text: string): Promise<NodeAnswer> {
  const { json } = await rpc(node.url, sendMessageBody(text));
  const error = json.error as { message?: string } | undefined;
  if (error) return { state: 'rpc-error', text: String(error.message) };
  const task = (
    json.result as {
      task: {
        status: { state: string; message?: { parts: { text?: string }[] } };
        artifacts?: { parts: { text?: string }[] }[];
      };
    }
  ).task;
  const texts = [...(task.artifacts ?? []).flatMap((a) => a.parts), ...(task.status.message?.parts ?? [])].map(
    (p) => p.text ?? '',
  );
  return { state: task.status.state, text: texts.join('\n') };
}

/** True when a text looks like a JavaScript stack trace or an HTML page. */
export function leaksInternals(text: string): boolean {
  return (
    /<!doctype|<html|<pre>|<body/i.test(text) ||
    /\n\s*at .+[(\s].*:\d+:\d+\)?/.test(text) ||
    /\bat (Object|Module|process|new )\S*.*:\d+:\d+/.test(text)
  );
}
