import type { KnowledgeStore, InquiryStore } from './knowledge';
import type { GraphStore } from './graph';
import type { JobQueue } from './jobQueue';
import type { BackgroundJobStore, CronStore, ExecJobStore, WorkflowStore } from './jobs';
import type { PaymentLedger } from './ledger';
import type { MemoryStore } from './memory';
import type { SessionStore } from './sessions';
import type { ReplicaView } from './replicas';
import type { TimelineStore } from './timelines';
import type { VaultStore } from './vault';
import type { VectorStore } from './vectors';

/**
 * The node's identity on federation hop paths: created once per database and
 * kept across restarts. A URL would not do: nodes started on port 0 (tests,
 * demos) would all be `http://127.0.0.1:0` and see loops that are not there.
 */
export interface NodeIdentityStore {
  /** This node's id (`urn:lango:<uuid>`), created on first call. */
  nodeId(): Promise<string>;
}

/**
 * Every store of the node, behind interfaces a second database can
 * implement (issue 16): async, row-shaped, ids as text, each read or write
 * naming the principal whose data it is. The A2A task rows are the A2A
 * layer's own (`src/a2a/`).
 */
export interface Stores {
  node: NodeIdentityStore;
  sessions: SessionStore;
  memory: MemoryStore;
  knowledge: KnowledgeStore;
  inquiries: InquiryStore;
  graph: GraphStore;
  vectors: VectorStore;
  vault: VaultStore;
  ledger: PaymentLedger;
  cron: CronStore;
  background: BackgroundJobStore;
  workflows: WorkflowStore;
  execJobs: ExecJobStore;
  /** Finished turns' timelines (the console's task steps), kept across restarts and shared by replicas. */
  timelines: TimelineStore;
  /** The replicas heartbeating into the database (PostgreSQL only): what the console shows of a cluster. */
  replicas?: ReplicaView;
  /** Where cron fire times and background jobs wait until taken (by one replica of many on PostgreSQL). */
  jobQueue: JobQueue;
}

/**
 * Whether the database in use answers now. `problem` is one of a few fixed
 * phrases, never an error's text: it is shown to health probes, which
 * anyone may send (the details go to the log).
 */
export type StoreHealth = { ok: true } | { ok: false; problem: StoreProblem };

/** Why a database does not answer, as a health probe may be told. */
export type StoreProblem = 'unavailable' | 'timed out' | 'file missing' | 'file replaced' | 'closed';

/** An open database and its stores: what the composition root builds once and closes last. */
export interface Storage {
  readonly stores: Stores;
  /**
   * Asks the database in use whether it answers (SQLite: the file the node
   * writes; PostgreSQL: the pool, bounded in time). Never rejects.
   */
  health(): Promise<StoreHealth>;
  /** Writes everything queued and closes the database. */
  close(): Promise<void>;
}
