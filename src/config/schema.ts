import { z } from 'zod';
import { DURATION_FORMS, durationMs, formatDuration } from '../duration';
import { DEFAULT_DATA_DIR } from './files';

/**
 * The configuration schema: the single source of truth for every key, its
 * type and its default. `LangoConfig.parse({})` is a working node on embedded
 * defaults. Keys are documented in the README's configuration reference.
 */

/** The first path segments of the node's own routes: a tenant (`/{tenant}/…`) named like one would shadow it. */
const RESERVED_PATH_SEGMENTS = [
  'tasks',
  'extendedAgentCard',
  'v1',
  'agents',
  'healthz',
  'readyz',
  'metrics',
  'console',
];

/**
 * A duration key in the one grammar (`500ms`, `30s`, `5m`, `2h`, `1d`), its
 * default and its maximum: a longer one is refused, the key named. Each
 * maximum is documented (docs/configuration.md, "Durations"), and those of
 * keys a timer waits for are well within what a Node timer keeps.
 */
function Duration(fallback: string, max: string) {
  const maxMs = durationMs(max)!;
  return z
    .string()
    .superRefine((text, ctx) => {
      const ms = durationMs(text);
      if (ms === undefined) ctx.addIssue({ code: 'custom', message: DURATION_FORMS });
      else if (ms > maxMs) ctx.addIssue({ code: 'custom', message: `at most ${max}` });
    })
    .default(fallback)
    .meta({ maxDuration: max });
}

/** The message of a milliseconds key past its maximum: `at most 60000 (1m)`. */
const atMost = (maxMs: number) => `at most ${maxMs} (${formatDuration(maxMs)})`;

/** An http:// or https:// URL: the only schemes the node's clients speak (a typo like `htp:/` is caught here). */
const HttpUrl = () => z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' });

/**
 * TLS on every port the node listens on (issue 26): its certificate and key
 * (PEM files), and with `clientCa` mutual TLS: `required` refuses a
 * connection without a client certificate that CA issued, `optional` lets
 * it in and maps a presented certificate to a caller (`a2a.auth.callers[].clientCertificates`).
 */
const ServerTls = z
  .object({
    cert: z.string().min(1),
    key: z.string().min(1),
    clientCa: z.string().min(1).optional(),
    clientCert: z.enum(['required', 'optional']).optional(),
  })
  .strict()
  .refine((tls) => !tls.clientCert || tls.clientCa, {
    message: 'clientCert needs clientCa (the CA that issues client certificates)',
    path: ['clientCert'],
  });

const Server = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(4000),
    /** The A2A gRPC binding's port on `host` (0: any free port); no gRPC when unset. */
    grpcPort: z.number().int().min(0).max(65535).optional(),
    tls: ServerTls.optional(),
  })
  .strict();

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

const RemoteAgentAuth = z.discriminatedUnion('type', [
  z.object({ type: z.literal('bearer'), token: z.string().min(1) }).strict(),
  z
    .object({ type: z.literal('apiKey'), header: z.string().min(1).default('X-API-Key'), key: z.string().min(1) })
    .strict(),
  /** OAuth 2 client credentials (RFC 6749 §4.4): a token fetched from `tokenUrl` on first use, refreshed before it expires. */
  z
    .object({
      type: z.literal('oauth2'),
      tokenUrl: HttpUrl(),
      clientId: z.string().min(1),
      clientSecret: z.string().min(1),
      scopes: z.array(z.string().min(1)).default([]),
      /** Sent as `resource` (RFC 8707) and `audience`: the API the token is for. */
      audience: z.string().min(1).optional(),
      /** How the client authenticates to the token endpoint. */
      clientAuth: z.enum(['basic', 'post']).default('basic'),
    })
    .strict(),
  /**
   * On-behalf-of delegation (OAuth 2.0 Token Exchange, RFC 8693, issue 33): each call made for a caller that
   * presented a token of `a2a.auth.oidc` carries that token exchanged at `tokenUrl` for one whose audience is the
   * remote (the caller its subject, this node its actor). A caller with nothing to exchange (a static credential,
   * the local owner): `required` refuses the call, `preferred` sends the node's own client-credentials token.
   */
  z
    .object({
      type: z.literal('tokenExchange'),
      tokenUrl: HttpUrl(),
      clientId: z.string().min(1),
      clientSecret: z.string().min(1),
      /** The remote's audience (`audience`, and `resource` when it is a URI). */
      audience: z.string().min(1),
      scopes: z.array(z.string().min(1)).default([]),
      onBehalfOf: z.enum(['required', 'preferred']).default('required'),
      clientAuth: z.enum(['basic', 'post']).default('basic'),
      /** Also sends the node's own client-credentials token as the exchange's `actor_token`. */
      actorToken: z.boolean().default(false),
    })
    .strict(),
]);

/** A client certificate for a remote agent that asks for one, and the CA its server certificate is checked against. */
const RemoteAgentTls = z
  .object({
    /** PEM, a PEM file path, or `{{secret:NAME}}`. */
    cert: z.string().min(1).optional(),
    key: z.string().min(1).optional(),
    ca: z.string().min(1).optional(),
  })
  .strict()
  .refine((tls) => Boolean(tls.cert) === Boolean(tls.key), { message: 'cert and key go together' });

const RemoteAgentEntry = z
  .object({
    name: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/, 'letters, digits, _ and -, starting with a letter'),
    agentCardUrl: HttpUrl().optional(),
    baseUrl: HttpUrl().optional(),
    cardFile: z.string().optional(),
    description: z.string().max(1000).optional(),
    timeoutMs: z.number().int().positive().max(120_000, atMost(120_000)).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    auth: RemoteAgentAuth.optional(),
    tls: RemoteAgentTls.optional(),
    enabled: z.boolean().default(true),
    /** Allow interface URLs on another origin than the card's. */
    allowCrossOrigin: z.boolean().default(false),
    /**
     * Which binding calls the peer: `auto`, the card's first the node speaks over HTTP (JSON-RPC, HTTP+JSON), or its
     * gRPC interface when it offers only that; `grpc`, its gRPC interface.
     */
    transport: z.enum(['auto', 'grpc']).default('auto'),
    /** The entry's host name may resolve to loopback, private or link-local addresses (a peer on the LAN by name). */
    allowPrivateNetwork: z.boolean().default(false),
    /** Pinned verification key for signed cards: JWKS URL/JSON or PEM. */
    publicKey: z.string().optional(),
  })
  .strict()
  .refine((e) => [e.agentCardUrl, e.baseUrl, e.cardFile].filter(Boolean).length === 1, {
    message: 'exactly one of agentCardUrl, baseUrl or cardFile is required',
  });

/** Names a grant lets through: `all`, or a list of exact names. */
const Reach = z.union([z.literal('all'), z.array(z.string().min(1))]);

/**
 * What a caller may reach beyond the default grant; a field left out keeps
 * the default's (every specialist, every remote agent, the tool families
 * marked for peers). Names are checked against the node when it starts.
 */
const CallerGrant = z
  .object({
    specialists: Reach.optional(),
    remoteAgents: Reach.optional(),
    toolFamilies: Reach.optional(),
  })
  .strict();

/**
 * A client certificate by its subject (`CN=peer-a`, or several attributes
 * `CN=peer-a, O=Example`, each of which must match) or its SHA-256
 * fingerprint (hex, colons optional).
 */
const ClientCertificate = z.union([
  z
    .object({ subject: z.string().regex(/^\s*[A-Za-z.0-9]+=[^,]+(,\s*[A-Za-z.0-9]+=[^,]+)*\s*$/, 'e.g. CN=peer-a') })
    .strict(),
  z
    .object({
      fingerprint: z
        .string()
        .regex(/^([0-9a-fA-F]{2}:?){31}[0-9a-fA-F]{2}$/, 'a SHA-256 fingerprint: 64 hex digits, colons optional'),
    })
    .strict(),
]);

/** The signature algorithms a token may use: asymmetric only, so no key the node publishes can forge one. */
const TokenAlgorithm = z.enum([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
]);

/**
 * Inbound OAuth 2 / OpenID Connect (issue 26): JWT access tokens from one
 * issuer, checked against its JWKS. A token's subject or client id names a
 * caller (`callers[].oidcSubjects`); its scopes map to grants (`scopes`).
 */
const A2aOidc = z
  .object({
    issuer: HttpUrl(),
    /** The `aud` a token must carry (one of them, when a list). */
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
    /** The issuer's key set; found by discovery (`<issuer>/.well-known/openid-configuration`) when unset. */
    jwksUrl: HttpUrl().optional(),
    algorithms: z.array(TokenAlgorithm).min(1).default(['RS256', 'PS256', 'ES256', 'EdDSA']),
    clockToleranceSeconds: z.number().int().min(0).max(300, 'at most 300 (5m)').default(30),
    /** The issuer may be on loopback or a private network (a local identity provider); refused otherwise. */
    allowPrivateNetwork: z.boolean().default(false),
    /** How the card tells clients to get a token: OIDC discovery, or OAuth 2 client credentials at `tokenUrl`. */
    cardScheme: z.enum(['openIdConnect', 'oauth2']).default('openIdConnect'),
    tokenUrl: HttpUrl().optional(),
    /** Scope → what it grants (fields left out keep the default grant's); shown on the card. */
    scopes: z
      .record(z.string().min(1), z.object({ description: z.string().optional(), grant: CallerGrant }).strict())
      .default({}),
    /** A token whose subject names no caller: runs as `oidc:<subject>` with its scopes' grant, or is refused. */
    unknownSubjects: z.enum(['scopes', 'refuse']).default('scopes'),
  })
  .strict()
  .refine((oidc) => oidc.cardScheme !== 'oauth2' || oidc.tokenUrl, {
    message: 'cardScheme oauth2 needs tokenUrl (the card names where clients get tokens)',
    path: ['tokenUrl'],
  });

/**
 * One configured caller: its name (the principal id its rows are stored
 * under), its credentials (values may be `${ENV}` or `{{secret:NAME}}` from
 * the owner's vault), and either `owner: true` or a grant.
 */
const A2aCaller = z
  .object({
    name: z
      .string()
      .regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/, 'letters, digits, _ and -, starting with a letter')
      .refine((name) => name !== 'owner', '"owner" is reserved: set owner: true instead')
      .refine((name) => name !== 'anonymous', '"anonymous" is reserved: it names callers without a credential'),
    bearerTokens: z.array(z.string().min(1)).default([]),
    apiKeys: z.array(z.string().min(1)).default([]),
    /** Subjects (`sub`) or client ids (`client_id`, `azp`) of tokens from `a2a.auth.oidc` that are this caller. */
    oidcSubjects: z.array(z.string().min(1)).default([]),
    /** Client certificates (mutual TLS, `server.tls.clientCa`) that are this caller. */
    clientCertificates: z.array(ClientCertificate).default([]),
    owner: z.boolean().default(false),
    grant: CallerGrant.optional(),
  })
  .strict()
  .refine(
    (caller) =>
      caller.bearerTokens.length +
        caller.apiKeys.length +
        caller.oidcSubjects.length +
        caller.clientCertificates.length >
      0,
    { message: 'a caller needs at least one bearer token or API key, OIDC subject or client certificate' },
  )
  .refine((caller) => !(caller.owner && caller.grant), {
    message: 'an owner caller reaches everything: remove its grant or owner: true',
  });

/**
 * Delegated tokens inbound (issue 33): a token of `a2a.auth.oidc` whose `act` claim says another party acts for
 * its subject runs as the subject, narrowed to what each actor of the chain may do (the grant of the caller its
 * subject names in `callers[].oidcSubjects`, else the default grant). Every actor of the chain must be listed
 * here, and the chain may be at most `maxDepth` long; any other delegated token is refused (401).
 */
const A2aDelegation = z
  .object({
    /** The token subjects (client ids) that may act for others: the `sub` of an `act` claim. */
    actors: z.array(z.string().min(1)).min(1),
    /** The most actors one token's chain may name. */
    maxDepth: z.number().int().min(1).max(8).default(3),
  })
  .strict();

const A2aAuth = z
  .object({
    /** Each token its own caller (`bearer:<hash>`) with the default grant. */
    bearerTokens: z.array(z.string().min(1)).default([]),
    /** Each key its own caller (`apikey:<hash>`) with the default grant. */
    apiKeys: z.array(z.string().min(1)).default([]),
    apiKeyHeader: z.string().default('X-API-Key'),
    /** JWT access tokens from an OAuth 2 / OpenID Connect issuer. */
    oidc: A2aOidc.optional(),
    /** Named callers with their own grants (or the owner's reach). */
    callers: z
      .array(A2aCaller)
      .default([])
      .refine((callers) => new Set(callers.map((c) => c.name)).size === callers.length, {
        message: 'caller names must be unique',
      }),
    /** Delegated tokens (an `act` claim, RFC 8693) of `oidc` accepted from these actors (issue 33). */
    delegation: A2aDelegation.optional(),
  })
  .strict()
  .refine((auth) => !auth.delegation || auth.oidc, {
    message: 'delegation needs oidc: delegated tokens come from that issuer',
    path: ['delegation'],
  });

const A2a = z
  .object({
    enabled: z.boolean().default(true),
    /** Public URL of this node; derived from server.host and server.port when unset. */
    baseUrl: HttpUrl().optional(),
    agentName: z.string().min(1).optional(),
    agentDescription: z.string().min(1).optional(),
    remoteAgents: z.array(RemoteAgentEntry).default([]),
    legacyCompat: z.boolean().default(true),
    /**
     * The A2A tenants served (the `tenant` field, `/{tenant}/…` REST routes): each a scope of its own for
     * tasks and every store; a request naming another tenant is not found. Empty: no tenants (one scope).
     */
    tenants: z
      .array(
        z
          .string()
          .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$/, 'letters, digits, _, . and -, starting with a letter or digit')
          .refine((tenant) => !RESERVED_PATH_SEGMENTS.includes(tenant), {
            message: `a tenant is a path segment: it cannot be one of the node's own (${RESERVED_PATH_SEGMENTS.join(', ')})`,
          }),
      )
      .default([])
      .refine((tenants) => new Set(tenants).size === tenants.length, { message: 'tenants must be unique' }),
    taskRetention: Duration('7d', '365d'),
    /** How long a send's idempotency key (its message id, or `Idempotency-Key`) is kept: a retry within it gets the first send's task. */
    idempotencyWindow: Duration('24h', '30d'),
    /** The longest a GetTask with `A2A-Current-Generation` holds before answering the task as it is. */
    longPollTimeout: Duration('30s', '10m'),
    auth: A2aAuth.optional(),
    allowUnauthenticated: z.boolean().default(false),
    signingKey: z.string().optional(),
    verifyCards: z.enum(['off', 'ifPresent', 'require']).default('ifPresent'),
    maxHops: z.number().int().min(1).max(32).default(4),
    cardFetchTimeoutMs: z.number().int().positive().max(60_000, atMost(60_000)).default(5000),
    /** Active health of remote agents: each card probed every `probeInterval` (with jitter), and on demand. */
    peerHealth: z
      .object({ probeInterval: Duration('30s', '1d') })
      .strict()
      .prefault({}),
    maxBodyBytes: z
      .number()
      .int()
      .positive()
      .default(100 * 1024),
    /** Bounds on what one delegated call may receive from a peer (issue 11, F). */
    peerLimits: z
      .object({
        /** Largest single response or stream event, and largest answer kept from one call. */
        maxAnswerBytes: z
          .number()
          .int()
          .min(1024)
          .default(1024 * 1024),
        /** Most stream events one call may receive. */
        maxEvents: z.number().int().min(1).default(10_000),
        /** Longest one call may last, streamed or polled; an entry's timeoutMs may shorten it. */
        maxDurationMs: z.number().int().positive().max(3_600_000, atMost(3_600_000)).default(120_000),
      })
      .strict()
      .prefault({}),
    pushNotifications: z
      .object({
        allowPrivateNetworks: z.boolean().default(false),
        maxAttempts: z.number().int().min(1).max(20).default(5),
        /** Deadline of one delivery attempt (the spec recommends 10–30 s). */
        timeoutMs: z.number().int().min(10_000).max(30_000, atMost(30_000)).default(15_000),
      })
      .strict()
      .prefault({}),
  })
  // Names must differ ignoring case, and from the node's own agents: checked across fields (`check.ts`).
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

const Tools = z
  .object({
    exec: z
      .object({
        enabled: z.boolean().default(true),
        policy: z.enum(['allow', 'deny', 'ask']).default('allow'),
        allow: z.array(z.string()).default([]),
        /** `auto`: bubblewrap when it works, else every command asks; `bwrap`: bubblewrap or no commands; `off`: never confined (every command asks). */
        sandbox: z.enum(['auto', 'bwrap', 'off']).default('auto'),
        bwrapPath: z.string().min(1).default('/usr/bin/bwrap'),
        /** Whether confined commands may use the network. */
        network: z.boolean().default(false),
        timeoutMs: z.number().int().positive().max(600_000, atMost(600_000)).default(30_000),
        maxOutputBytes: z
          .number()
          .int()
          .positive()
          .default(64 * 1024),
      })
      .strict()
      .prefault({}),
    fs: z
      .object({
        enabled: z.boolean().default(true),
        /** Workspace root; `dataDir/workspace` when unset. */
        root: z.string().optional(),
        maxReadBytes: z
          .number()
          .int()
          .positive()
          .default(1024 * 1024),
      })
      .strict()
      .prefault({}),
    skills: z
      .object({ enabled: z.boolean().default(true) })
      .strict()
      .prefault({}),
    browser: z
      .object({
        enabled: z.boolean().default(true),
        /** Unset: Debian's /usr/bin/chromium when present, else the Chromium of the @sparticuz/chromium package. */
        executablePath: z.string().min(1).optional(),
        allow: z.array(z.string()).default([]),
        deny: z.array(z.string()).default([]),
        idleTimeoutMs: z.number().int().positive().max(86_400_000, atMost(86_400_000)).default(300_000),
        /** Upper bound for one page load (browser_navigate). */
        navigationTimeoutMs: z.number().int().positive().max(300_000, atMost(300_000)).default(15_000),
        /** Default wait for a selector in browser_action / browser_screenshot. */
        actionTimeoutMs: z.number().int().positive().max(300_000, atMost(300_000)).default(5_000),
      })
      .strict()
      .prefault({}),
  })
  .strict();

const Toggle = z.object({ enabled: z.boolean().default(true) }).strict();

/** What the node shows of its own work: metrics, traces, task timelines and the console (issue 13). */
const Observability = z
  .object({
    /** Serve Prometheus metrics at `GET /metrics` (the owner, or whoever presents `metricsToken`). */
    metrics: z.boolean().default(true),
    /** A bearer token that may read `/metrics` without being the owner (a Prometheus scraper). */
    metricsToken: z.string().min(1).optional(),
    /**
     * Record each turn's steps for the console, stored (across restarts, every replica's) (`tasks`: turns kept,
     * newest; `exchanges`: also keep what each model step was sent and answered, redacted and capped, for the
     * console's model inspector and replays).
     */
    timeline: z
      .object({
        enabled: z.boolean().default(true),
        tasks: z.number().int().min(1).max(10_000).default(200),
        exchanges: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    /** Serve the owner's web console at `/console` (agents, tasks, timelines, chat). */
    console: z.boolean().default(true),
    /** Carry each task's account of what ran (agents, tools, remotes, tokens; issue 33) in its metadata. */
    accounting: z.boolean().default(true),
    /**
     * OpenTelemetry traces over OTLP/HTTP: exported only when an endpoint is
     * set, here or by `OTEL_EXPORTER_OTLP_ENDPOINT` /
     * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`.
     */
    otlp: z
      .object({
        /** The traces URL (`…/v1/traces`). */
        tracesEndpoint: z.url().optional(),
        protocol: z.enum(['http/protobuf', 'http/json']).default('http/protobuf'),
        headers: z.record(z.string(), z.string()).default({}),
        serviceName: z.string().min(1).default('lango'),
      })
      .strict()
      .prefault({}),
  })
  .strict();

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
    server: Server.prefault({}),
    dataDir: z.string().min(1).default(DEFAULT_DATA_DIR),
    storage: Storage.prefault({}),
    cluster: Cluster.prefault({}),
    logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
    agent: Agent.prefault({}),
    a2a: A2a.prefault({}),
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
    tools: Tools.prefault({}),
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
    observability: Observability.prefault({}),
  })
  .strict();

export type LangoConfig = z.infer<typeof LangoConfig>;
/** The configuration as written in a file, before defaults. */
export type LangoConfigInput = z.input<typeof LangoConfig>;
export type RemoteAgentEntry = z.infer<typeof RemoteAgentEntry>;
/** One entry of `a2a.auth.callers`. */
export type A2aCaller = z.infer<typeof A2aCaller>;
export { RemoteAgentEntry };
/** `a2a.auth.oidc`: the issuer whose tokens the node accepts. */
export type A2aOidc = z.infer<typeof A2aOidc>;
/** `a2a.auth.delegation`: who may act for others. */
export type A2aDelegation = z.infer<typeof A2aDelegation>;
/** `server.tls`. */
export type ServerTls = z.infer<typeof ServerTls>;
