import type { Dialect } from './sql';

/** This replica as the job stores see it: its id on the rows it runs, and the lease past which a silent one is lost. */
export interface ReplicaScope {
  replicaId: string;
  leaseMs: number;
}

/** Why a row run by a replica that stopped heartbeating was failed. */
export const REPLICA_LOST = 'replica lost';

/** A piece of SQL and the values its `?`s take, in order. */
export interface Bound {
  sql: string;
  params: unknown[];
}

/**
 * Which running rows a job store fails as interrupted, and why: the one
 * difference between one process and replicas for the job stores. SQLite:
 * one process owns the file, so at its start every running row was its
 * own, interrupted by its restart. PostgreSQL: this replica's own rows
 * ("node restarted") and any replica's silent past the lease ("replica
 * lost", by the heartbeats in `cluster_replicas`, database time).
 */
export interface Lease {
  /** The replica recorded on the rows this process runs (none with SQLite). */
  replicaId: string | null;
  /** The condition on a row's `replica` column. */
  interrupted: Bound;
  /** The reason to record, as an SQL expression. */
  reason: Bound;
}

/** "The row's replica is gone": no heartbeat within the lease, or none recorded. Binds the lease in ms. */
export const LOST =
  `(replica IS NULL OR NOT EXISTS (SELECT 1 FROM cluster_replicas r WHERE r.replica_id = replica` +
  ` AND r.heartbeat_at > now() - make_interval(secs => CAST(? AS double precision) / 1000)))`;

/** The lease of this process on `dialect` (`replica`: PostgreSQL's replica; unused with SQLite). */
export function leaseOf(dialect: Dialect, replica?: ReplicaScope): Lease {
  if (dialect === 'sqlite' || !replica)
    return {
      replicaId: null,
      interrupted: { sql: '1 = 1', params: [] },
      reason: { sql: `'node restarted'`, params: [] },
    };
  return {
    replicaId: replica.replicaId,
    interrupted: { sql: `(replica = ? OR ${LOST})`, params: [replica.replicaId, replica.leaseMs] },
    reason: {
      sql: `CASE WHEN replica = ? THEN 'node restarted' ELSE '${REPLICA_LOST}' END`,
      params: [replica.replicaId],
    },
  };
}

/**
 * `UPDATE <table> SET <set>, … WHERE status = 'running' AND <interrupted>`:
 * `set` may use `$reason`, the lease's reason; `values` bind its other `?`s.
 */
export function failInterruptedStatement(lease: Lease, table: string, set: string, values: unknown[]): Bound {
  const [before, after] = set.includes('$reason') ? set.split('$reason') : [set, undefined];
  return {
    sql: `UPDATE ${table} SET ${before}${after === undefined ? '' : `${lease.reason.sql}${after}`}
          WHERE status = 'running' AND ${lease.interrupted.sql}`,
    params: [...values, ...(after === undefined ? [] : lease.reason.params), ...lease.interrupted.params],
  };
}
