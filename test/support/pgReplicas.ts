import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { startOpenAIServer, type OpenAIServer } from './openaiServer';
import { startTestPostgres, type TestPostgres } from './postgres';

/** The master key every replica of a test cluster shares (a vault opened by all of them). */
export const REPLICA_MASTER_KEY = 'c'.repeat(64);

/** One node of a test cluster, serving A2A on 127.0.0.1. */
export interface ReplicaNode {
  replicaId: string;
  /** The node's base URL (`http://127.0.0.1:<port>`). */
  url: string;
  app: LangoApp;
  logger: MemoryLogger;
  /** Closes the node (idempotent) and removes its data folder. */
  close(): Promise<void>;
}

/** Replicas of one node on one PostgreSQL database, sharing one scripted model. */
export interface ReplicaCluster {
  nodes: ReplicaNode[];
  model: OpenAIServer;
  /** The database they share (another replica, a `lango serve` process, may join it). */
  databaseUrl: string;
  /** Closes every node still open, the model server and the data folders. */
  close(): Promise<void>;
}

/** Options of {@link startReplicaCluster}. */
export interface ReplicaClusterOptions {
  /** The PostgreSQL database every replica stores in (`storage.url`). */
  url: string;
  /** The replicas' ids, one node each (default `a`, `b`, `c`). */
  replicaIds?: string[];
  /** `cluster.heartbeatInterval` and `cluster.lease` (default 200 ms and 1 s: a lost replica is seen quickly). */
  heartbeatInterval?: string;
  lease?: string;
  /** Configuration merged into every replica's (before its own dataDir, storage and cluster keys; `agent` and `tools` keys kept beside its model and browser keys). */
  config?: Record<string, unknown>;
  apiKey?: string;
}

/**
 * Starts replicas of one node: each a whole node (`createApp`) with its own
 * data folder and port, all on one PostgreSQL database and one scripted
 * OpenAI-compatible model, listening on 127.0.0.1. The cluster end-to-end
 * tests put a balancer in front of these.
 * @example
 * const cluster = await startReplicaCluster({ url: await pg.createDatabase() });
 * cluster.model.push({ text: 'hi' });
 * await cluster.close();
 */
export async function startReplicaCluster(options: ReplicaClusterOptions): Promise<ReplicaCluster> {
  const model = await startOpenAIServer();
  const nodes: ReplicaNode[] = [];
  const close = async () => {
    for (const node of nodes) await node.close();
    await model.close();
  };
  try {
    for (const replicaId of options.replicaIds ?? ['a', 'b', 'c']) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `lango-replica-${replicaId}-`));
      const logger = createMemoryLogger({ replica: replicaId });
      let closed: Promise<void> | undefined;
      const node: ReplicaNode = {
        replicaId,
        url: '',
        app: undefined as unknown as LangoApp,
        logger,
        close: () =>
          (closed ??= (async () => {
            try {
              await node.app?.close();
            } finally {
              fs.rmSync(dataDir, { recursive: true, force: true });
            }
          })()),
      };
      nodes.push(node);
      const config = resolveConfig({
        ...options.config,
        server: { port: 0, host: '127.0.0.1' },
        dataDir,
        storage: { url: options.url },
        cluster: {
          replicaId,
          heartbeatInterval: options.heartbeatInterval ?? '200ms',
          lease: options.lease ?? '1s',
        },
        security: { masterKey: REPLICA_MASTER_KEY },
        agent: {
          ...(options.config?.agent as Record<string, unknown> | undefined),
          provider: 'openai',
          apiKey: options.apiKey ?? 'sk-test',
          baseUrl: model.baseURL,
          model: 'scripted',
        },
        tools: { ...(options.config?.tools as Record<string, unknown> | undefined), browser: { enabled: false } },
      });
      node.app = await createApp(config, { logger, cwd: dataDir });
      node.url = await node.app.listen();
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { nodes, model, databaseUrl: options.url, close };
}

/**
 * A throwaway PostgreSQL server and replicas of one node on a database of it,
 * for the suite it is called in (registers its own beforeAll / afterAll).
 * @example
 * const cluster = useReplicaCluster({ replicaIds: ['a', 'b'] });
 * it('…', () => { const [a, b] = cluster().nodes; });
 */
export function useReplicaCluster(options: Omit<ReplicaClusterOptions, 'url'>): () => ReplicaCluster {
  let server: TestPostgres | undefined;
  let cluster: ReplicaCluster | undefined;
  beforeAll(async () => {
    server = await startTestPostgres();
    cluster = await startReplicaCluster({ ...options, url: await server.createDatabase() });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await server?.stop();
  });
  return () => {
    if (!cluster) throw new Error('the replicas are not started (use cluster() inside tests and hooks)');
    return cluster;
  };
}
