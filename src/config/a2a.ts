import { z } from 'zod';
import { A2aAuth } from './a2aAuth';
import { atMost, Duration, HttpUrl } from './fields';
import { RemoteAgentEntry } from './remoteAgents';

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

/** `a2a.*`: how the node serves A2A to peers and callers, and which remote agents it federates. */
export const A2aConfig = z
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
