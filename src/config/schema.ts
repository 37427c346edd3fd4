import { z } from 'zod';
import { A2aConfig } from './a2a';
import { atMost, Duration, HttpUrl } from './fields';
import { DEFAULT_DATA_DIR } from './files';
import { ObservabilityConfig } from './observability';
import { ServerConfig } from './server';
import { ToolsConfig } from './tools';

/**
 * The configuration schema: the single source of truth for every key, its
 * type and its default. `LangoConfig.parse({})` is a working node on embedded
 * defaults. Keys are documented in the README's configuration reference.
 * The larger sections live beside it, one file each (`server.ts`, `a2a.ts`
 * with `a2aAuth.ts` and `remoteAgents.ts`, `tools.ts`, `observability.ts`);
 * this module assembles them and is the one the rest of the node imports.
 */

const Agent = z
  .object({
    multiAgent: z.boolean().default(true),
    /** `offline` is chosen by the loader when no API key is configured. */
    provider: z.enum(['openai', 'offline']).optional(),
    model: z.string().min(1).default('gpt-4o-mini'),
    baseUrl: HttpUrl().optional(),
    apiKey: z.string().optional(),
    maxDelegationRounds: z.number().int().min(1).max(50).default(5),
    /** Model calls per agent within one turn before the agent must answer. */
    maxTurnsPerAgent: z.number().int().min(1).max(100).default(10),
    promptsDir: z.string().optional(),
    requestTimeoutMs: z.number().int().positive().max(1_800_000, atMost(1_800_000)).default(120_000),
  })
  .strict();

const Embedding = z
  .object({
    provider: z.enum(['none', 'local', 'openai']).default('local'),
    model: z.string().default('text-embedding-3-small'),
    baseUrl: HttpUrl().optional(),
    apiKey: z.string().optional(),
    dimensions: z.number().int().positive().optional(),
  })
  .strict();

const Toggle = z.object({ enabled: z.boolean().default(true) }).strict();

/** Where the stores live: a `postgres://` URL, or (unset) the embedded SQLite file under dataDir. */
const Storage = z
  .object({
    url: z
      .string()
      .regex(/^postgres(ql)?:\/\/./, 'expected a postgres:// (or postgresql://) URL')
      .optional(),
  })
  .strict();

/** This replica among others on one PostgreSQL database. */
const Cluster = z
  .object({
    /** Names this replica in the heartbeat table and on the rows it runs; host name and pid when unset. */
    replicaId: z.string().min(1).max(200).optional(),
    heartbeatInterval: Duration('5s', '5m'),
    /** A replica silent this long is lost: kept short, so a lost replica's callers hear of it quickly. */
    lease: Duration('15s', '1h'),
  })
  .strict();
/** The whole configuration, after defaults. */
export const LangoConfig = z
  .object({
    server: ServerConfig.prefault({}),
    dataDir: z.string().min(1).default(DEFAULT_DATA_DIR),
    storage: Storage.prefault({}),
    cluster: Cluster.prefault({}),
    logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
    agent: Agent.prefault({}),
    a2a: A2aConfig.prefault({}),
    graph: Toggle.prefault({}),
    observationalMemory: z
      .object({
        enabled: z.boolean().default(true),
        /** Approximate tokens of new messages in a session before the observer runs. */
        observeAfterTokens: z.number().int().positive().default(2000),
        reflectAfterObservations: z.number().int().positive().default(8),
        recallBudgetTokens: z.number().int().positive().default(400),
      })
      .strict()
      .prefault({}),
    embedding: Embedding.prefault({}),
    tools: ToolsConfig.prefault({}),
    security: z
      .object({
        enabled: z.boolean().default(true),
        /**
         * Vault master key (`LANGO_MASTER_KEY`): 64 hex characters, 44 base64
         * characters, or a passphrase; a 0600 key file in dataDir when unset.
         */
        masterKey: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    payment: z
      .object({
        enabled: z.boolean().default(false),
        rpcUrl: z.url().optional(),
        usdcAddress: z.string().optional(),
        chainId: z.number().int().positive().default(8453),
        perTransactionLimit: z.number().positive().default(10),
        dailyLimit: z.number().positive().default(50),
        approvalThreshold: z.number().nonnegative().default(1),
      })
      .strict()
      .prefault({}),
    cron: Toggle.prefault({}),
    background: z
      .object({ enabled: z.boolean().default(true), concurrency: z.number().int().min(1).max(64).default(2) })
      .strict()
      .prefault({}),
    workflow: Toggle.prefault({}),
    observability: ObservabilityConfig.prefault({}),
  })
  .strict();

export type LangoConfig = z.infer<typeof LangoConfig>;
/** The configuration as written in a file, before defaults. */
export type LangoConfigInput = z.input<typeof LangoConfig>;
export { RemoteAgentEntry } from './remoteAgents';
export type { A2aCaller, A2aDelegation, A2aOidc } from './a2aAuth';
export type { ServerTls } from './server';
