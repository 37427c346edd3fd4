import type { ClusterSettings } from '../../config/cluster';
import type { Logger } from '../../log/logger';
import { errorMessage } from '../../errors';
import type { ReplicaView } from '../replicas';
import { rows, transaction, type PgDatabase, type PgQueryable, type PgSchema } from './database';

/**
 * Replicas and the rows they run: each replica heartbeats into
 * `cluster_replicas` (database time, so replicas' clocks need not agree);
 * every running job row names the replica running it; a cron run is unique
 * per (job, scheduled time, trigger), so one replica of many runs it.
 */
export const CLUSTER_SCHEMA: PgSchema = {
  store: 'cluster',
  steps: [
    `CREATE TABLE cluster_replicas (
       replica_id TEXT PRIMARY KEY, started_at TIMESTAMPTZ NOT NULL, heartbeat_at TIMESTAMPTZ NOT NULL);
     ALTER TABLE bg_jobs ADD COLUMN replica TEXT;
     ALTER TABLE cron_runs ADD COLUMN replica TEXT;
     ALTER TABLE workflow_runs ADD COLUMN replica TEXT;
     ALTER TABLE exec_jobs ADD COLUMN replica TEXT;
     CREATE UNIQUE INDEX cron_runs_once ON cron_runs (owner, job_name, scheduled_for, trigger);`,
  ],
};

/** Why a row run by a replica that stopped heartbeating was failed. */
export const REPLICA_LOST = 'replica lost';

/**
 * The SQL condition "the row's `replica` is gone": no heartbeat within the
 * lease ($2, milliseconds), or no replica recorded at all.
 */
const LOST = `(replica IS NULL OR NOT EXISTS (SELECT 1 FROM cluster_replicas r
  WHERE r.replica_id = replica AND r.heartbeat_at > now() - make_interval(secs => $2::double precision / 1000)))`;

/**
 * The rows a job store fails at start ("node restarted": this replica's
 * own, left by its previous life under the same id) and on every sweep
 * ("replica lost": any replica's past its lease). `$1` is this replica's id.
 */
export const INTERRUPTED = `(replica = $1 OR ${LOST})`;
/** The reason to record: this replica's own rows were interrupted by its restart; others' replicas were lost. */
export const INTERRUPTED_REASON = `CASE WHEN replica = $1 THEN 'node restarted' ELSE '${REPLICA_LOST}' END`;

/** This replica as the job stores see it. */
export interface ReplicaScope {
  replicaId: string;
  leaseMs: number;
}

/**
 * Fails the running rows of replicas silent past the lease: background
 * jobs, cron runs, workflow runs (and their unfinished steps) as failed
 * "replica lost", background commands as `lost`. Resolves with how many.
 */
export async function failLostReplicaRows(db: PgDatabase, scope: ReplicaScope, at: string): Promise<number> {
  return transaction(db, async (client) => {
    const params = [scope.replicaId, scope.leaseMs, at];
    const count = async (sql: string) => (await client.query(sql, params)).rowCount ?? 0;
    const others = `replica IS DISTINCT FROM $1 AND ${LOST}`;
    let failed = await count(
      `UPDATE bg_jobs SET status = 'failed', finished_at = $3, result = '${REPLICA_LOST}' WHERE status = 'running' AND ${others}`,
    );
    failed += await count(
      `UPDATE cron_runs SET status = 'failed', finished_at = $3, result = '${REPLICA_LOST}' WHERE status = 'running' AND ${others}`,
    );
    await count(
      `UPDATE workflow_steps SET status = CASE status WHEN 'running' THEN 'failed' ELSE 'cancelled' END,
         finished_at = $3, result = CASE status WHEN 'running' THEN '${REPLICA_LOST}' ELSE result END
       WHERE status IN ('running', 'pending')
         AND run_id IN (SELECT id FROM workflow_runs WHERE status = 'running' AND ${others})`,
    );
    failed += await count(
      `UPDATE workflow_runs SET status = 'failed', finished_at = $3, error = '${REPLICA_LOST}' WHERE status = 'running' AND ${others}`,
    );
    failed += await count(`UPDATE exec_jobs SET status = 'lost', ended_at = $3 WHERE status = 'running' AND ${others}`);
    return failed;
  });
}

/** Another replica's row as a heartbeat sees it. */
interface ReplicaSeen {
  replica_id: string;
  /** Heartbeat within the lease of the replica that looked. */
  live: boolean;
}

/**
 * Records one heartbeat of the replica (its first also its start) and
 * resolves with the other replicas' rows, each live or not by this
 * replica's lease: one statement, which is all a beat costs while no replica
 * is lost or leaves.
 */
export async function heartbeat(db: PgQueryable, scope: ReplicaScope): Promise<ReplicaSeen[]> {
  const { rows } = await db.query<ReplicaSeen>({
    name: 'cluster_heartbeat',
    text: `WITH beat AS (
             INSERT INTO cluster_replicas (replica_id, started_at, heartbeat_at) VALUES ($1, now(), now())
             ON CONFLICT (replica_id) DO UPDATE SET heartbeat_at = now())
           SELECT replica_id, heartbeat_at > now() - make_interval(secs => $2::double precision / 1000) AS live
           FROM cluster_replicas WHERE replica_id <> $1 ORDER BY replica_id`,
    values: [scope.replicaId, scope.leaseMs],
  });
  return rows;
}

/**
 * The replicas' heartbeat rows as the console shows them: each one's age by
 * the database's clock (replicas' clocks need not agree), live within this
 * replica's lease.
 */
export function createPgReplicaView(options: { db: PgDatabase; scope: ReplicaScope }): ReplicaView {
  const { db, scope } = options;
  return {
    async replicas() {
      const found = await rows<{ replica_id: string; started_at: Date; age_ms: string | number; live: boolean }>(
        db,
        `SELECT replica_id, started_at, EXTRACT(EPOCH FROM (now() - heartbeat_at)) * 1000 AS age_ms,
           heartbeat_at > now() - make_interval(secs => $1::double precision / 1000) AS live
         FROM cluster_replicas ORDER BY replica_id COLLATE "C"`,
        [scope.leaseMs],
      );
      return found.map((row) => ({
        replicaId: row.replica_id,
        startedAt: new Date(row.started_at).toISOString(),
        heartbeatAgeMs: Math.max(0, Math.round(Number(row.age_ms))),
        live: row.live,
        self: row.replica_id === scope.replicaId,
      }));
    },
  };
}

/** Forgets the replicas silent past the lease, once their rows are failed: later beats need not sweep for them. */
async function forgetLostReplicas(db: PgDatabase, scope: ReplicaScope): Promise<void> {
  await db.query(
    `DELETE FROM cluster_replicas
     WHERE replica_id <> $1 AND heartbeat_at <= now() - make_interval(secs => $2::double precision / 1000)`,
    [scope.replicaId, scope.leaseMs],
  );
}

/**
 * Beats between sweeps when nothing called for one: a guard for running
 * rows naming a replica that was forgotten and then wrote before it beat
 * again.
 */
const GUARD_SWEEP_BEATS = 30;

/**
 * Heartbeats every `heartbeatMs`. A beat sweeps (fails the rows of replicas
 * lost past the lease, then forgets those replicas) only when it sees
 * another replica past the lease, or the set of other replicas changed since
 * the last beat (one that stopped cleanly removed its row), on the first
 * beat, and every {@link GUARD_SWEEP_BEATS} beats: each replica sweeping on
 * every beat was three transactions and seven statements a second per
 * replica, for nothing, while every replica is well. A replica's death is
 * still seen within about a lease and a beat. A replica back from losing
 * its database holds its sweeps for a lease: the others may be coming back
 * from the same outage, and are not lost. The first beat is awaited (a
 * replica is live before it serves). Returns the stop function, which
 * removes the replica's row: a replica that stopped cleanly is not waited
 * for.
 */
export async function startHeartbeat(options: {
  db: PgDatabase;
  cluster: ClusterSettings;
  logger: Logger;
  clock: () => Date;
  /** Fails what else lost replicas left running (the A2A tasks), on each sweep after the job rows; resolves with how many. */
  failLostTasks?: (at: Date) => Promise<number>;
}): Promise<() => Promise<void>> {
  const { db, cluster, clock, failLostTasks } = options;
  const log = options.logger.child({ component: 'cluster' });
  await heartbeat(db, cluster);
  /** The other replicas the last beat saw, live or not, as one string; undefined until a sweep has run. */
  let seenBefore: string | undefined;
  let beatsSinceSweep = 0;
  /**
   * After a beat that failed (this replica could not reach the database),
   * no sweep until a lease and a beat have passed: every other replica was
   * perhaps cut off too, and is live if it beats again within that time.
   */
  let sweepsHeldUntil = 0;
  let beating: Promise<void> = Promise.resolve();
  const beat = async () => {
    try {
      const others = await heartbeat(db, cluster);
      if (Date.now() < sweepsHeldUntil) return;
      const seen = others.map((r) => r.replica_id).join('\u0000');
      beatsSinceSweep += 1;
      const due = seen !== seenBefore || others.some((r) => !r.live) || beatsSinceSweep >= GUARD_SWEEP_BEATS;
      if (!due) return;
      const at = clock();
      const failed = await failLostReplicaRows(db, cluster, at.toISOString());
      if (failed > 0) log.warn('rows of a lost replica failed', { count: failed });
      const tasks = (await failLostTasks?.(at)) ?? 0;
      if (tasks > 0) log.warn('tasks of a lost replica failed', { count: tasks });
      await forgetLostReplicas(db, cluster);
      // What the next beat compares with: the replicas still remembered after this sweep.
      seenBefore = others
        .filter((r) => r.live)
        .map((r) => r.replica_id)
        .join('\u0000');
      beatsSinceSweep = 0;
    } catch (err) {
      // Logged once per outage: a replica cut off from its database beats every interval.
      if (Date.now() >= sweepsHeldUntil) log.warn('heartbeat failed', { error: errorMessage(err) });
      sweepsHeldUntil = Date.now() + cluster.leaseMs + cluster.heartbeatMs;
    }
  };
  const timer = setInterval(() => {
    beating = beating.then(beat);
  }, cluster.heartbeatMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await beating;
    await db.query('DELETE FROM cluster_replicas WHERE replica_id = $1', [cluster.replicaId]).catch(() => {});
  };
}
