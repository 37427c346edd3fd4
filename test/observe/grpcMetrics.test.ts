import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import { grpcCall } from '../support/grpcCall';
import { parseScrape } from '../support/prometheus';

/** Real nodes (createApp) serving gRPC on loopback: its calls are counted as every binding's are (spans: tracing.test.ts). */
describe('the gRPC binding mounts the same interceptors: request metrics', () => {
  const dirs: string[] = [];
  const apps: LangoApp[] = [];
  afterEach(async () => {
    while (apps.length) await apps.pop()!.close();
    while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
  });

  async function node(input: LangoConfigInput): Promise<{ url: string; grpc: string; app: LangoApp }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-grpc-observed-'));
    dirs.push(dir);
    const config = resolveConfig({
      dataDir: dir,
      tools: { browser: { enabled: false } },
      ...input,
      server: { port: 0, grpcPort: 0 },
    });
    const app = await createApp(config, { logger: createMemoryLogger() });
    apps.push(app);
    const url = await app.listen();
    return { url, grpc: `127.0.0.1:${app.grpcPort}`, app };
  }
  const greeting = (id: string) => ({ message: { messageId: id, role: 'ROLE_USER', parts: [{ text: 'hi' }] } });

  it('counts gRPC calls by A2A method and the HTTP status their code stands for', async () => {
    const { url, grpc } = await node({});
    expect((await grpcCall(grpc, 'SendMessage', greeting('m-1'))).error).toBeUndefined();
    expect((await grpcCall(grpc, 'SendMessage', greeting('m-2'))).error).toBeUndefined();
    expect((await grpcCall(grpc, 'GetTask', { id: 'no-such-task' })).error?.code).toBe(5);
    const scrape = parseScrape(await (await fetch(`${url}/metrics`)).text());
    expect(scrape.value('lango_a2a_requests_total', { method: 'SendMessage', status: '200' })).toBe(2);
    expect(scrape.value('lango_a2a_requests_total', { method: 'GetTask', status: '404' })).toBe(1);
  });
});
