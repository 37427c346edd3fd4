/** One replica as the database last heard from it. */
export interface ReplicaInfo {
  replicaId: string;
  startedAt: string;
  /** Milliseconds since its last heartbeat, by the database's clock. */
  heartbeatAgeMs: number;
  /** Heartbeat within the lease of the replica that asked. */
  live: boolean;
  /** The replica that asked. */
  self: boolean;
}

/**
 * The replicas of one node sharing a database, as their heartbeats say
 * (`store/postgres/cluster.ts`): a replica silent past the lease is listed
 * as not live until a sweep forgets it.
 */
export interface ReplicaView {
  /** Every replica with a heartbeat row, by id. */
  replicas(): Promise<ReplicaInfo[]>;
}
