import { createMemoryLogger } from '../../../src/log/logger';
import { OWNER } from '../../../src/principal';
import { Client } from 'pg';
import { migratePostgres, openPostgresStorage, type PostgresStorage } from '../../../src/store/postgres/storage';
import type { CronRun } from '../../../src/store/jobs';
import { backgroundFamily, cronFamily } from '../../../src/tools/automator/families';
import type { TurnInput } from '../../../src/agent/turn';
import { automatorDeps, createFamily, createGate, createRecordingRunner } from '../../support/automatorRunner';
import { waitFor } from '../../support/waitFor';
import { startTestPostgres, type TestPostgres } from '../../support/postgres';
import { skipWithoutPostgres } from '../../support/prerequisites';

/**
 * Cron and background jobs of two or three replicas on one throwaway
 * PostgreSQL (each replica its own storage, pool, heartbeat and job queue,
 * in this process): every fire time and every queued job runs once
 * cluster-wide, and what one replica queues another runs when the first is
 * gone.
 */
if (!skipWithoutPostgres('cron and background jobs across replicas')) {
  describe('cron and background jobs across replicas on PostgreSQL', () => {
    let server: TestPostgres;
    let url: string;
    const open: { close(): Promise<void> }[] = [];

    beforeAll(async () => {
      server = await startTestPostgres();
    }, 60_000);
    beforeEach(async () => {
      url = await server.createDatabase();
    });
    afterEach(async () => {
      for (const item of open.splice(0).reverse()) await item.close();
    });
    afterAll(async () => {
      await server?.stop();
    });

    /** One replica: its storage and a started cron and background family answering through its own runner. */
    async function replica(
      replicaId: string,
      options: { start?: boolean; respond?: (input: TurnInput) => Promise<string> } = {},
    ) {
      const storage: PostgresStorage = await openPostgresStorage({
        url,
        logger: createMemoryLogger(),
        clock: () => new Date(),
        cluster: { replicaId, heartbeatMs: 500, leaseMs: 2_000 },
      });
      open.push(storage);
      const deps = await automatorDeps({ storage, config: { background: { concurrency: 1 } } });
      const turns = createRecordingRunner(options.respond ?? ((input) => `${replicaId} ran ${input.sessionId}`));
      const cron = await createFamily(cronFamily, deps);
      const background = await createFamily(backgroundFamily, deps);
      const families = {
        async close() {
          await cron.close();
          await background.close();
        },
      };
      open.push(families);
      const start = async () => {
        await cron.start({ runner: turns.runner });
        await background.start({ runner: turns.runner });
      };
      if (options.start !== false) await start();
      return {
        storage,
        turns,
        cron,
        background,
        start,
        /** Stops the replica as `serve` does on SIGTERM: families first, then the storage (its heartbeat row goes). */
        async stop() {
          await families.close();
          await storage.close();
        },
      };
    }
    const cronRuns = async (storage: PostgresStorage, name: string): Promise<CronRun[]> =>
      (await storage.stores.cron.history(OWNER, name, 100)).reverse();
    /** The states of the job queue's entries on `queue` whose data has `key` = `value` (pg-boss's own table). */
    async function queueEntries(queue: string, key: string, value: string): Promise<string[]> {
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ state: string }>(
          'SELECT state FROM pgboss.job WHERE name = $1 AND data->>$2 = $3 ORDER BY created_on',
          [queue, key, value],
        );
        return rows.map((r) => r.state);
      } finally {
        await client.end();
      }
    }
    const WAITING_OR_TAKEN = ['created', 'retry', 'active'];

    it('migrates the queue with the schema: two migrations at once create its schema and queues once', async () => {
      const applied = await Promise.all([migratePostgres(url), migratePostgres(url)]);
      expect(Math.max(...applied)).toBeGreaterThan(10);
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ name: string; policy: string }>(
          'SELECT name, policy FROM pgboss.queue ORDER BY name',
        );
        expect(rows).toEqual([
          { name: 'lango-background', policy: 'short' },
          { name: 'lango-cron', policy: 'short' },
        ]);
      } finally {
        await client.end();
      }
    });

    it('runs an every-2-seconds cron job exactly once per tick across three replicas', async () => {
      const replicas = [await replica('r1'), await replica('r2'), await replica('r3')];
      await replicas[1].cron.call('cron_add', { name: 'tick', schedule: '*/2 * * * * *', prompt: 'tick' });
      const runs = await waitFor(
        async () => {
          const all = await cronRuns(replicas[0].storage, 'tick');
          return all.filter((r) => r.status === 'completed').length >= 4 && all;
        },
        20_000,
        'four completed runs of the every-2-seconds job',
      );
      const times = runs.map((r) => Date.parse(r.scheduledFor));
      expect(new Set(times).size).toBe(times.length);
      // Consecutive ticks: none skipped, none run twice.
      for (let i = 1; i < times.length; i += 1) expect(times[i] - times[i - 1]).toBe(2_000);
      expect(runs.every((r) => r.trigger === 'schedule')).toBe(true);
      // How late each run starts (a replica is woken when the fire time comes, not at its next poll) is the bench's
      // cronLateness figure.
      const turns = () => replicas.reduce((sum, r) => sum + r.turns.inputs.length, 0);
      await waitFor(
        async () => turns() === (await cronRuns(replicas[0].storage, 'tick')).length,
        20_000,
        'turns = runs',
      );
      expect(replicas.flatMap((r) => r.turns.inputs.map((i) => i.sessionId))).toEqual(Array(turns()).fill('cron:tick'));
    }, 40_000);

    it('runs a background job queued on A, stopped before it started, once on B', async () => {
      const a = await replica('a', { start: false });
      const b = await replica('b', { start: false });
      const submitted = await a.background.call('bg_submit', { prompt: 'summarise the logs', label: 'failover' });
      await a.stop();
      await b.start();
      const job = await waitFor(
        async () => {
          const row = await b.storage.stores.background.get(OWNER, submitted.id);
          return row?.status === 'completed' && row;
        },
        20_000,
        'the job to complete on B',
      );
      expect(job.result).toBe(`b ran bg:${submitted.id}`);
      expect(b.turns.inputs.map((i) => i.text)).toEqual(['summarise the logs']);
      // Its one queue entry is done: nothing is left that any poll after could run again.
      expect(await queueEntries('lango-background', 'id', submitted.id)).toEqual(['completed']);
    }, 30_000);

    it('starts a background job on the replica it was submitted to; one submitted to a full replica runs on another', async () => {
      const gate = createGate();
      const a = await replica('a', {
        respond: async (input) => {
          await gate.opened;
          return `a ran ${input.text}`;
        },
      });
      const b = await replica('b');
      const held = await a.background.call('bg_submit', { prompt: 'hold' });
      expect(a.turns.inputs.map((i) => i.text)).toEqual(['hold']);
      const second = await a.background.call('bg_submit', { prompt: 'second' });
      const done = await waitFor(
        async () => {
          const row = await a.storage.stores.background.get(OWNER, second.id);
          return row?.status === 'completed' && row;
        },
        20_000,
        'the second job to complete on B',
      );
      expect(done.result).toBe(`b ran bg:${second.id}`);
      expect(b.turns.inputs.map((i) => i.text)).toEqual(['second']);
      gate.open();
      await waitFor(
        async () => (await a.storage.stores.background.get(OWNER, held.id))?.status === 'completed',
        20_000,
        'the held job to complete on A',
      );
      expect(a.turns.inputs.map((i) => i.text)).toEqual(['hold']);
    }, 30_000);

    it('stops a background job running on A when it is cancelled through B', async () => {
      const gate = createGate();
      const a = await replica('a', {
        respond: async () => {
          await gate.opened;
          return 'finished anyway';
        },
      });
      const b = await replica('b');
      const held = await a.background.call('bg_submit', { prompt: 'hold' });
      await waitFor(
        async () => (await b.storage.stores.background.get(OWNER, held.id))?.status === 'running',
        20_000,
        'the job to run on A',
      );
      const cancelled = await b.background.call('bg_cancel', { id: held.id });
      expect(cancelled.status).toBe('cancelled');
      // A's turn ends on its own abort (the gate stays shut), well within a few polls.
      await waitFor(() => a.turns.active === 0, 20_000, 'A to stop the turn');
      const row = await a.storage.stores.background.get(OWNER, held.id);
      expect(row?.status).toBe('cancelled');
      expect(b.turns.inputs).toEqual([]);
      gate.open();
    }, 30_000);

    it('fires on B a cron job added on A while A is stopped; a job removed on A never fires on B', async () => {
      const a = await replica('a');
      const b = await replica('b', { start: false });
      await a.cron.call('cron_add', { name: 'soon', schedule: 'every 1500ms', prompt: 'soon' });
      await a.cron.call('cron_add', { name: 'gone', schedule: 'every 1500ms', prompt: 'gone' });
      await a.cron.call('cron_remove', { name: 'gone' });
      await a.stop();
      await b.start();
      const [first] = await waitFor(
        async () => {
          const runs = await cronRuns(b.storage, 'soon');
          return runs[0]?.status === 'completed' && runs;
        },
        20_000,
        'B to fire the job',
      );
      expect(first.result).toBe('b ran cron:soon');
      expect(a.turns.inputs).toEqual([]);
      // B had its chance: no entry of the removed job is left waiting (any there was, B took and dropped), and
      // none of its turns is the removed job's.
      await waitFor(
        async () =>
          (await queueEntries('lango-cron', 'name', 'gone')).every((state) => !WAITING_OR_TAKEN.includes(state)),
        20_000,
        'no entry of the removed job left to take',
      );
      expect(b.turns.inputs.map((i) => i.sessionId)).not.toContain('cron:gone');
    }, 30_000);

    it('gives a job missed while every replica was down one catch-up run, then runs it on schedule', async () => {
      const a = await replica('a');
      await a.cron.call('cron_add', { name: 'missed', schedule: 'every 1s', prompt: 'missed' });
      const [ran] = await waitFor(
        async () => {
          const runs = await cronRuns(a.storage, 'missed');
          return runs.length >= 1 && runs;
        },
        20_000,
        'a first run on A',
      );
      await a.stop();
      // Every replica down for several fire times: B starts once the clock has passed three more.
      const missedUntil = Date.parse(ran.scheduledFor) + 3_500;
      await waitFor(() => Date.now() >= missedUntil, 20_000, 'three fire times to pass with no replica up');
      const b = await replica('b');
      const runs = await waitFor(
        async () => {
          const all = await cronRuns(b.storage, 'missed');
          return (
            all.some((r) => r.trigger === 'catch-up') && all.filter((r) => r.trigger === 'schedule').length >= 2 && all
          );
        },
        20_000,
        'a catch-up run then a scheduled one',
      );
      const catchUps = runs.filter((r) => r.trigger === 'catch-up');
      expect(catchUps).toHaveLength(1);
      const afterCatchUp = runs.slice(runs.indexOf(catchUps[0]) + 1);
      // The next fire time counts from the catch-up, not from the missed times.
      expect(afterCatchUp.length).toBeGreaterThan(0);
      expect(Date.parse(afterCatchUp[0].scheduledFor)).toBeGreaterThan(Date.parse(catchUps[0].startedAt));
    }, 40_000);
  });
}
