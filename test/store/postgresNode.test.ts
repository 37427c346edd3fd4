import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { runToEnd } from '../../src/agent/turn';
import { createApp, type LangoApp } from '../../src/app';
import { runCli } from '../../src/cli/main';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';
import { OWNER } from '../../src/principal';
import { startTestPostgres, type TestPostgres } from '../support/postgres';
import { skipWithoutPostgres } from '../support/prerequisites';

const MASTER_KEY = 'b'.repeat(64);

/**
 * Whole nodes on PostgreSQL (storage.url): `lango migrate`, then two
 * replicas (each its own dataDir, one database) serving one conversation.
 */
if (!skipWithoutPostgres('nodes on PostgreSQL')) {
  describe('nodes on PostgreSQL', () => {
    let server: TestPostgres;
    let url: string;
    const dirs: string[] = [];
    const apps: LangoApp[] = [];
    beforeAll(async () => {
      server = await startTestPostgres();
      url = await server.createDatabase();
    }, 60_000);
    afterAll(async () => {
      for (const app of apps.splice(0)) await app.close();
      for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
      await server?.stop();
    });

    const tempDir = () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-pg-node-'));
      dirs.push(dir);
      return dir;
    };
    const replica = async (replicaId: string) => {
      const dataDir = tempDir();
      const config = resolveConfig({
        dataDir,
        storage: { url },
        cluster: { replicaId },
        security: { masterKey: MASTER_KEY },
        tools: { browser: { enabled: false } },
      });
      const app = await createApp(config, { logger: createMemoryLogger(), cwd: dataDir });
      apps.push(app);
      return app;
    };

    it('lango migrate applies every schema step once, under the lock, and again finds nothing to do', async () => {
      const cwd = tempDir();
      fs.writeFileSync(path.join(cwd, 'lango.config.yaml'), `storage:\n  url: ${url}\n`);
      const migrate = async () => {
        let out = '';
        const code = await runCli(['migrate'], {
          io: { out: (s) => void (out += s), err: () => {} },
          env: { LOG_LEVEL: 'error', LANGO_MASTER_KEY: MASTER_KEY },
          cwd,
          stopSignal: new Promise(() => {}),
        });
        return { code, out };
      };
      // Two at once: the advisory lock makes them take turns, so every step is applied exactly once.
      const [first, second] = await Promise.all([migrate(), migrate()]);
      expect([first.code, second.code]).toEqual([0, 0]);
      const applied = [first.out, second.out].map((o) => Number(/: (\d+) schema step/.exec(o)?.[1]));
      expect(Math.min(...applied)).toBe(0);
      expect(Math.max(...applied)).toBeGreaterThan(10);
      expect((await migrate()).out).toContain(': 0 schema step(s) applied');
      const client = new Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM schema_migrations');
      await client.end();
      expect(Number(rows[0].n)).toBe(Math.max(...applied));
    });

    it('two replicas are one node: one id, one conversation numbered without a clash, one vault', async () => {
      const [a, b] = await Promise.all([replica('a'), replica('b')]);
      expect(a.nodeId).toBe(b.nodeId);
      const first = await runToEnd(a.runner, { principal: OWNER, sessionId: 'shared', text: 'hello from a' });
      expect(first.status).toBe('completed');
      // Turns of one conversation on both replicas at once: each gets its own numbers.
      await Promise.all([
        runToEnd(a.runner, { principal: OWNER, sessionId: 'shared', text: 'again from a' }),
        runToEnd(b.runner, { principal: OWNER, sessionId: 'shared', text: 'hello from b' }),
      ]);
      const seen = await b.stores.sessions.messages(OWNER, 'shared');
      expect(seen.map((m) => m.seq)).toEqual(seen.map((_, i) => i + 1));
      expect(seen.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(
        expect.arrayContaining(['hello from a', 'again from a', 'hello from b']),
      );
      expect(await a.stores.sessions.messages(OWNER, 'shared')).toEqual(seen);
      // The vault's check value was written once; both replicas opened it with the same key.
      const check = await a.stores.vault.meta('check');
      expect(check).toEqual(expect.any(String));
      expect(await b.stores.vault.meta('check')).toBe(check);
    });

    it('keeps running when its PostgreSQL server goes away: unhealthy, the turn fails, the process lives; healthy and serving once it is back', async () => {
      const lost = await startTestPostgres();
      const dataDir = tempDir();
      const app = await createApp(
        resolveConfig({
          dataDir,
          storage: { url: await lost.createDatabase() },
          security: { masterKey: MASTER_KEY },
          tools: { browser: { enabled: false } },
        }),
        { logger: createMemoryLogger(), cwd: dataDir },
      );
      try {
        // No SQLite file is opened beside PostgreSQL: readiness asks the database in use.
        expect(fs.readdirSync(dataDir).filter((name) => name.startsWith('lango.db'))).toEqual([]);
        expect(await app.health()).toEqual({ ok: true });
        expect((await runToEnd(app.runner, { principal: OWNER, sessionId: 's', text: 'hello' })).status).toBe(
          'completed',
        );
        // The pool holds idle connections; their server ending them must not end this process.
        await lost.halt();
        expect(await app.health()).toEqual({ ok: false, problem: 'unavailable' });
        await expect(runToEnd(app.runner, { principal: OWNER, sessionId: 's', text: 'again' })).rejects.toThrow();
        await lost.resume();
        expect(await app.health()).toEqual({ ok: true });
        expect((await runToEnd(app.runner, { principal: OWNER, sessionId: 's', text: 'back' })).status).toBe(
          'completed',
        );
      } finally {
        await app.close();
        await lost.stop();
      }
    }, 60_000);
  });
}
