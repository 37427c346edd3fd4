import { z } from 'zod';

/** What the node shows of its own work: metrics, traces, task timelines and the console (issue 13). */
export const ObservabilityConfig = z
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
