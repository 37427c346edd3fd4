import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { LlmAgent, RemoteAgent, RemoteOutcome } from '../../src/agent/agent';
import type { RunEvent } from '../../src/agent/events';
import { defineTool, type AnyTool } from '../../src/agent/tool';
import type { TurnRunner } from '../../src/agent/turn';
import { LangoConfig, type LangoConfigInput } from '../../src/config/schema';
import type { Principal } from '../../src/principal';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { buildAgentTree } from '../../src/orchestration/tree';
import { createCallers } from '../../src/identity/callers';
import { createIdentity } from '../../src/identity/identity';
import { createA2AServer, type A2AServer, type A2AServerOptions } from '../../src/a2a/server';
import { DEFAULT_PEER_GRANT } from '../../src/tools/families';
import type { SqliteDatabase } from '../../src/store/sqlite/database';
import { openSqliteStorage, type SqliteStorage } from '../../src/store/sqlite/storage';
import { createSqliteTaskEventLog } from '../../src/store/sqlite/taskEvents';
import { createSqliteTaskRows } from '../../src/store/sqlite/taskRows';
import { ScriptedA2ARunner } from './a2aRunner';

/** Tools the test tree is built from: real tool objects, never executed by the scripted runner. */
export function a2aTestTools(): AnyTool[] {
  const noop = async () => 'ok';
  return [
    defineTool({
      name: 'exec_shell',
      description: 'Runs a command.',
      parameters: z.object({ command: z.string() }),
      execute: noop,
    }),
    defineTool({
      name: 'fs_read',
      description: 'Reads a file.',
      parameters: z.object({ path: z.string() }),
      execute: noop,
    }),
    defineTool({
      name: 'secrets_get',
      description: 'Reads a secret.',
      parameters: z.object({ name: z.string() }),
      execute: noop,
    }),
  ];
}

/** A remote peer in the tree (no network: it answers at once). */
export function a2aTestPeer(name = 'peer'): RemoteAgent {
  return {
    kind: 'remote',
    name,
    description: 'Translates documents between languages',
    keywords: ['translate'],
    cardUrl: `http://127.0.0.1:9/${name}/.well-known/agent-card.json`,
    // eslint-disable-next-line require-yield
    async *invoke(invocation): AsyncGenerator<RunEvent, RemoteOutcome> {
      return { status: 'completed', text: `translated: ${invocation.text}` };
    },
  };
}

/** The real tree builder over the test tools and one remote peer. */
export function a2aTestTree(): LlmAgent {
  return buildAgentTree({
    tools: a2aTestTools(),
    remoteAgents: [a2aTestPeer()],
    systemPrompt: 'SECRET ORCHESTRATOR PROMPT',
  });
}

/** A running node on 127.0.0.1 port 0 over a SQLite file in a temp dir. */
export interface A2ATestNode {
  url: string;
  a2a: A2AServer;
  db: SqliteDatabase;
  dir: string;
  dbFile: string;
  logger: MemoryLogger;
  runner: TurnRunner;
  config: LangoConfig;
  /** The gRPC binding's address (`127.0.0.1:<port>`) with `grpc: true`. */
  grpcAddress?: string;
  /** Stops the server and closes the db (keeps the dir). */
  stop(): Promise<void>;
  /** Stops and removes the temp dir. */
  close(): Promise<void>;
}

/** Options for {@link startA2ANode}. */
export interface StartOptions {
  config?: LangoConfigInput;
  /** The runner, or a factory given the node's storage (a real runner keeps its sessions there). */
  runner?: TurnRunner | ((storage: SqliteStorage) => TurnRunner);
  root?: (principal?: Principal) => LlmAgent;
  /** Reuse a directory (restart tests). */
  dir?: string;
  /** Also serve the gRPC binding on a free loopback port (`grpcPort`, `grpcAddress`). */
  grpc?: boolean;
  extra?: Partial<A2AServerOptions>;
}

/**
 * Starts the A2A server the way the composition root does: createA2AServer
 * on a real database file, mounted on a node http server on 127.0.0.1:0.
 */
export async function startA2ANode(options: StartOptions = {}): Promise<A2ATestNode> {
  const dir = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'lango-a2a-'));
  const dbFile = path.join(dir, 'lango.db');
  const logger = createMemoryLogger();
  const storage = openSqliteStorage({ file: dbFile, logger, clock: () => new Date() });
  const { db } = storage;
  const runner =
    typeof options.runner === 'function' ? options.runner(storage) : (options.runner ?? new ScriptedA2ARunner());
  const tree = a2aTestTree();
  const config = LangoConfig.parse({
    server: { host: '127.0.0.1', port: 0 },
    ...options.config,
    a2a: { pushNotifications: { allowPrivateNetworks: true, maxAttempts: 3 }, ...options.config?.a2a },
  });
  let a2a: A2AServer;
  try {
    a2a = createA2AServer({
      config,
      root: options.root ?? (() => tree),
      runner,
      identity: createIdentity({
        config,
        callers: createCallers(config.a2a.auth, { defaultGrant: DEFAULT_PEER_GRANT }),
        logger,
      }),
      health: () => storage.health(),
      taskRows: createSqliteTaskRows({ db, group: storage.group, logger, redact: options.extra?.redact }),
      taskEvents: createSqliteTaskEventLog({ db, group: storage.group, logger, redact: options.extra?.redact }),
      logger,
      clock: () => new Date(),
      push: { baseDelayMs: 20, timeoutMs: 10_000 },
      ...options.extra,
    });
  } catch (err) {
    await storage.close();
    if (!options.dir) fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const server = http.createServer(a2a.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  a2a.setPublicUrl(url);
  const grpcAddress = options.grpc ? `127.0.0.1:${await a2a.listenGrpc('127.0.0.1', 0)}` : undefined;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await a2a.close();
    await storage.close();
  };
  return {
    url,
    a2a,
    db,
    dir,
    dbFile,
    logger,
    runner,
    config,
    grpcAddress,
    stop,
    close: async () => {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** POSTs a raw body to the node and returns status, headers and the parsed (or raw) body. */
export async function rawPost(
  url: string,
  body: string,
  headers: Record<string, string> = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}
