/**
 * Bench-only entry: starts one lango node in this process with the offline
 * model (MODEL=offline, the default) or the instant scripted model
 * (MODEL=instant), on 127.0.0.1:PORT with DATA_DIR. EXTRA_CONFIG is a JSON
 * object merged into the configuration (e.g. remote agents). GRPC_PORT (0: a
 * free one) also serves the gRPC binding (`server.grpcPort`).
 *
 * Prints `{"ready":true,"url":...,"startupMs":...}` on stdout once listening
 * (with `grpcAddress` when gRPC is on).
 * SIGUSR2 (with --expose-gc) runs a full GC and prints one JSON line with
 * process.memoryUsage(), as the SDK baseline does.
 */
import { performance } from 'node:perf_hooks';
import { createApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';
import { createInstantModel } from './instantModel';
import { answerMemoryProbe } from './memoryStats';

async function main(): Promise<void> {
  const t0 = performance.now();
  const extra = process.env.EXTRA_CONFIG ? (JSON.parse(process.env.EXTRA_CONFIG) as Record<string, unknown>) : {};
  const config = resolveConfig({
    ...extra,
    server: {
      host: '127.0.0.1',
      port: Number(process.env.PORT ?? 0),
      ...(process.env.GRPC_PORT !== undefined ? { grpcPort: Number(process.env.GRPC_PORT) } : {}),
    },
    dataDir: process.env.DATA_DIR ?? '.lango-bench',
    logLevel: process.env.LOG_LEVEL ?? 'warn',
    tools: { browser: { enabled: false } },
  });
  const model =
    process.env.MODEL === 'instant'
      ? createInstantModel({
          specialist: process.env.INSTANT_AGENT ?? 'vault',
          tool: process.env.INSTANT_TOOL ?? 'crypto_hash',
          toolArguments: JSON.parse(process.env.INSTANT_ARGS ?? '{"text":"hello"}') as Record<string, unknown>,
        })
      : undefined;
  const logger = process.env.LOG_LEVEL === 'memory' ? createMemoryLogger() : undefined;
  const app = await createApp(config, { ...(model ? { model } : {}), ...(logger ? { logger } : {}) });
  const url = await app.listen();
  answerMemoryProbe();
  process.stdout.write(
    `${JSON.stringify({
      ready: true,
      url,
      startupMs: Math.round(performance.now() - t0),
      pid: process.pid,
      grpcAddress: app.grpcPort === undefined ? undefined : `127.0.0.1:${app.grpcPort}`,
    })}\n`,
  );

  const stop = () => {
    void app.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench node failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
