import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';

/** A response body as JSON (fetch types it `unknown`). */
const json = (response: Response): Promise<any> => response.json();

describe('discovery and health', () => {
  let node: A2ATestNode;
  const peerCard = {
    name: 'peer',
    supportedInterfaces: [{ url: 'http://127.0.0.1:9/peer', protocolBinding: 'JSONRPC' }],
  };
  beforeAll(async () => {
    node = await startA2ANode({
      extra: {
        peerStatus: () => [
          {
            name: 'peer',
            cardUrl: 'http://127.0.0.1:9/peer/.well-known/agent-card.json',
            state: 'healthy',
            latencyMs: 12,
            failures: 0,
          },
        ],
        remoteCard: (name) => (name === 'peer' ? peerCard : undefined),
      },
    });
  });
  afterAll(() => node.close());

  it('lists local and remote sub-agents with capabilities, and remote card URL and health', async () => {
    const response = await fetch(`${node.url}/agents`);
    expect(response.status).toBe(200);
    const catalog = await json(response);
    expect(catalog.root).toBe('lango-orchestrator');
    const operator = catalog.agents.find((a: { name: string }) => a.name === 'operator');
    expect(operator).toMatchObject({ kind: 'local', capabilities: ['command execution', 'file operations'] });
    expect(operator.cardUrl).toBeUndefined();
    const peer = catalog.agents.find((a: { name: string }) => a.name === 'peer');
    expect(peer).toMatchObject({
      kind: 'remote',
      description: 'Translates documents between languages',
      cardUrl: 'http://127.0.0.1:9/peer/.well-known/agent-card.json',
      health: { state: 'healthy', latencyMs: 12 },
    });
    expect(JSON.stringify(catalog)).not.toMatch(/exec_shell|SECRET ORCHESTRATOR PROMPT/);
  });

  it('serves the card held for a remote peer, and 404s for local or unknown agents', async () => {
    const held = await fetch(`${node.url}/agents/peer/card`);
    expect(held.status).toBe(200);
    expect(await json(held)).toEqual(peerCard);
    const local = await fetch(`${node.url}/agents/operator/card`);
    expect(local.status).toBe(404);
    expect((await json(local)).error.message).toMatch(/local agent/);
    expect((await fetch(`${node.url}/agents/nobody/card`)).status).toBe(404);
  });

  it('reports the process up on /healthz and the database and tree ready on /readyz', async () => {
    expect(await json(await fetch(`${node.url}/healthz`))).toEqual({ status: 'ok' });
    const ready = await fetch(`${node.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await json(ready)).toEqual({ status: 'ready', checks: { database: 'ok', tree: 'ok' } });
  });

  it('reports not ready (503) when the database is closed, naming only that', async () => {
    const other = await startA2ANode();
    try {
      other.db.close();
      const response = await fetch(`${other.url}/readyz`);
      expect(response.status).toBe(503);
      expect(await json(response)).toEqual({ status: 'not ready', checks: { database: 'closed', tree: 'ok' } });
    } finally {
      await other.a2a.close();
      await other.close().catch(() => undefined);
    }
  });
});

/**
 * Readiness asks the SQLite file the node writes (`store/sqlite/health.ts`),
 * through a whole node: a file deleted or replaced under it keeps answering
 * through the open handle, but nothing written lands where a restart reads.
 */
describe('readiness of the SQLite file in use', () => {
  let dir: string;
  let app: LangoApp;
  let url: string;
  const file = () => path.join(dir, 'data', 'lango.db');
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-ready-'));
    app = await createApp(
      resolveConfig({ dataDir: path.join(dir, 'data'), server: { port: 0 }, tools: { browser: { enabled: false } } }),
      { logger: createMemoryLogger() },
    );
    url = await app.listen();
  });
  afterEach(async () => {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const readiness = async () => {
    const response = await fetch(`${url}/readyz`);
    return { status: response.status, body: await json(response) };
  };

  it('is ready while the file answers, and unready once it is deleted', async () => {
    expect(await readiness()).toEqual({
      status: 200,
      body: { status: 'ready', checks: { database: 'ok', tree: 'ok' } },
    });
    expect(await app.health()).toEqual({ ok: true });
    fs.rmSync(file());
    expect(await readiness()).toEqual({
      status: 503,
      body: { status: 'not ready', checks: { database: 'file missing', tree: 'ok' } },
    });
  });

  it('is unready when another file takes its place, and ready again when it is back', async () => {
    fs.renameSync(file(), `${file()}.kept`);
    new Database(file()).close();
    expect(await readiness()).toMatchObject({ status: 503, body: { checks: { database: 'file replaced' } } });
    fs.renameSync(`${file()}.kept`, file());
    expect(await readiness()).toMatchObject({ status: 200, body: { checks: { database: 'ok' } } });
  });
});
