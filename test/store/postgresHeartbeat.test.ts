import { createMemoryLogger } from '../../src/log/logger';
import { startHeartbeat } from '../../src/store/postgres/cluster';
import { openPgDatabase, type PgDatabase } from '../../src/store/postgres/database';
import { emptyAllTables } from '../support/postgres';
import { skipWithoutPostgres } from '../support/prerequisites';
import { useMigratedDatabase } from '../support/postgresSuite';
import { waitFor } from '../support/waitFor';

/**
 * A replica's heartbeat on its own: how many beats it has sent and how many
 * sweeps it has run (each sweep asks `failLostTasks` last).
 */
interface Beating {
  beats(): number;
  sweeps(): number;
  /** The beats sent when the last sweep ran: "no sweep for N beats" counts from there, not from when a test looks. */
  beatsAtLastSweep(): number;
  stop(): Promise<void>;
}

if (!skipWithoutPostgres('the heartbeat on PostgreSQL')) {
  describe('the cluster heartbeat', () => {
    const database = useMigratedDatabase();
    const pools: PgDatabase[] = [];
    const running: Beating[] = [];
    /** Replicas whose queries fail now, as when their database is unreachable. */
    const cutOff = new Set<string>();

    /**
     * The lease: far longer than a busy machine stalls a process, so a replica that beats every 20 ms is never
     * past it by accident.
     */
    const LEASE_MS = 5_000;
    /** Starts `replicaId`'s heartbeat every 20 ms with a lease of {@link LEASE_MS}, counting its beats and sweeps. */
    const beating = async (replicaId: string): Promise<Beating> => {
      const pool = openPgDatabase(database.url(), { max: 2 });
      pools.push(pool);
      let beats = 0;
      let sweeps = 0;
      let beatsAtLastSweep = 0;
      const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
      // Counts the beats (the heartbeat statement is the named one); refuses every query while cut off.
      const counted = new Proxy(pool, {
        get(target, property, receiver) {
          if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
          return (...args: unknown[]) => {
            if (cutOff.has(replicaId)) return Promise.reject(new Error('connect ECONNREFUSED'));
            if ((args[0] as { name?: string }).name === 'cluster_heartbeat') beats += 1;
            return query(...args);
          };
        },
      });
      const stop = await startHeartbeat({
        db: counted,
        cluster: { replicaId, heartbeatMs: 20, leaseMs: LEASE_MS },
        logger: createMemoryLogger(),
        clock: () => new Date(),
        failLostTasks: () => {
          sweeps += 1;
          beatsAtLastSweep = beats;
          return Promise.resolve(0);
        },
      });
      const replica = { beats: () => beats, sweeps: () => sweeps, beatsAtLastSweep: () => beatsAtLastSweep, stop };
      running.push(replica);
      return replica;
    };
    const replicaIds = async () =>
      (await pools[0].query<{ replica_id: string }>('SELECT replica_id FROM cluster_replicas ORDER BY 1')).rows.map(
        (r) => r.replica_id,
      );

    beforeEach(() => emptyAllTables(database.url()));
    afterEach(async () => {
      cutOff.clear();
      for (const replica of running.splice(0)) await replica.stop();
      for (const pool of pools.splice(0)) await pool.end();
    });

    /**
     * Waits for `quiet` beats of `replica` after its last sweep: fewer than the guard sweep's 30, counted from the
     * sweep itself, so a slow start (many beats before the test looks) cannot run into the guard.
     */
    const quietBeats = async (replica: Beating, quiet: number, what: string) => {
      const swept = replica.sweeps();
      await waitFor(() => replica.beats() >= replica.beatsAtLastSweep() + quiet, 20_000, what);
      expect(replica.sweeps()).toBe(swept);
    };

    it('sweeps on its first beat, then not while every other replica beats', async () => {
      const a = await beating('a');
      await beating('b');
      // Beats sent once b beats (a beat goes out only after the one before it, sweep included, has ended): a has
      // seen b, however many beats it sent before b came up.
      const seenB = a.beats();
      await waitFor(() => a.beats() >= seenB + 3, 20_000, 'a to see b');
      // The first beat, and perhaps the one that first saw b; and the guard's (every 30 beats) if b took that long.
      expect(a.sweeps()).toBeGreaterThanOrEqual(1);
      expect(a.sweeps()).toBeLessThanOrEqual(2 + Math.floor(seenB / 30));
      await quietBeats(a, 20, '20 beats of a after its last sweep');
    });

    it('after an outage every replica lived through, sweeps nobody: each holds its sweeps for a lease', async () => {
      const a = await beating('a');
      const b = await beating('b');
      await waitFor(() => a.beats() >= 5 && b.beats() >= 5, 20_000, 'both replicas beating');
      const swept = { a: a.sweeps(), b: b.sweeps() };
      cutOff.add('a').add('b');
      // Until both heartbeats are past the lease by the database's clock: each finds the other's so when back.
      await waitFor(
        async () =>
          (
            await pools[0].query<{ n: string }>(
              `SELECT count(*) AS n FROM cluster_replicas WHERE heartbeat_at < now() - make_interval(secs => $1)`,
              [LEASE_MS / 1000],
            )
          ).rows[0].n === '2',
        20_000,
        'both heartbeats past the lease',
      );
      cutOff.clear();
      const beats = a.beats();
      await waitFor(() => a.beats() >= beats + 40, 20_000, '40 beats of a after the outage');
      expect({ a: a.sweeps(), b: b.sweeps() }).toEqual(swept);
      expect(await replicaIds()).toEqual(['a', 'b']);
    });

    it('sweeps when it sees a replica past the lease, forgets it, then stops sweeping', async () => {
      const a = await beating('a');
      await waitFor(() => a.sweeps() >= 1, 20_000, "a's first sweep");
      await pools[0].query(
        `INSERT INTO cluster_replicas (replica_id, started_at, heartbeat_at)
         VALUES ('gone', now() - interval '1 hour', now() - interval '1 hour')`,
      );
      await waitFor(async () => !(await replicaIds()).includes('gone'), 20_000, 'the lost replica to be forgotten');
      expect(a.sweeps()).toBeGreaterThanOrEqual(2);
      await quietBeats(a, 20, '20 beats of a after its last sweep');
    });

    it('sweeps once more when another replica stops cleanly (its left rows are failed at once)', async () => {
      const a = await beating('a');
      const b = await beating('b');
      await waitFor(async () => (await replicaIds()).join() === 'a,b', 20_000, 'both replicas beating');
      const beats = a.beats();
      await waitFor(() => a.beats() >= beats + 3, 20_000, 'a to see b');
      const swept = a.sweeps();
      await b.stop();
      await waitFor(() => a.sweeps() > swept, 20_000, 'a to sweep after b left');
      expect(await replicaIds()).toEqual(['a']);
    });
  });
}
