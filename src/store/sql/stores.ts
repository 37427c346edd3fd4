import type { Stores } from '../index';
import { createExecJobStore, EXEC_JOB_SCHEMA } from './execJobs';
import { createGraphStore, GRAPH_SCHEMA } from './graph';
import {
  BACKGROUND_SCHEMA,
  createBackgroundJobStore,
  createCronStore,
  createWorkflowStore,
  CRON_SCHEMA,
  WORKFLOW_SCHEMA,
} from './jobs';
import { createInquiryStore, createKnowledgeStore, INQUIRY_SCHEMA, KNOWLEDGE_SCHEMA } from './knowledge';
import { leaseOf, type ReplicaScope } from './lease';
import { createPaymentLedger, LEDGER_SCHEMA } from './ledger';
import { createMemoryStore, MEMORY_SCHEMA } from './memory';
import { createNodeIdentityStore, NODE_SCHEMA } from './nodeIdentity';
import type { Sql, StoreSchema } from './sql';
import { createVaultStore, VAULT_SCHEMA } from './vault';
import { createSessionStore, SESSION_SCHEMA } from './sessions';
import type { Logger } from '../../log/logger';

/** The schemas of the stores written once over the dialect seam, in the order they are applied. */
export const STORE_SCHEMAS: readonly StoreSchema[] = [
  NODE_SCHEMA,
  SESSION_SCHEMA,
  MEMORY_SCHEMA,
  KNOWLEDGE_SCHEMA,
  INQUIRY_SCHEMA,
  GRAPH_SCHEMA,
  VAULT_SCHEMA,
  LEDGER_SCHEMA,
  CRON_SCHEMA,
  BACKGROUND_SCHEMA,
  WORKFLOW_SCHEMA,
  EXEC_JOB_SCHEMA,
];

/** The stores written once (`sql/`), as both storages build them. */
export type SqlStores = Pick<
  Stores,
  | 'node'
  | 'sessions'
  | 'memory'
  | 'knowledge'
  | 'inquiries'
  | 'graph'
  | 'vault'
  | 'ledger'
  | 'cron'
  | 'background'
  | 'workflows'
  | 'execJobs'
>;

/**
 * Builds the stores written once over `sql` (their schemas applied):
 * the same code on SQLite and on PostgreSQL. `replica`: this replica among
 * others (PostgreSQL), whose rows the job stores name.
 */
export function createSqlStores(options: {
  sql: Sql;
  clock: () => Date;
  logger: Logger;
  /** Masks secret values in session messages before they are stored. */
  redact?: (text: string) => string;
  replica?: ReplicaScope;
}): SqlStores {
  const { sql, clock } = options;
  const jobs = { sql, lease: leaseOf(sql.dialect, options.replica) };
  return {
    node: createNodeIdentityStore({ sql }),
    sessions: createSessionStore({ sql, clock, logger: options.logger, redact: options.redact }),
    memory: createMemoryStore({ sql, clock }),
    knowledge: createKnowledgeStore({ sql, clock }),
    inquiries: createInquiryStore({ sql, clock }),
    graph: createGraphStore({ sql, clock }),
    vault: createVaultStore({ sql }),
    ledger: createPaymentLedger({ sql }),
    cron: createCronStore(jobs),
    background: createBackgroundJobStore(jobs),
    workflows: createWorkflowStore(jobs),
    execJobs: createExecJobStore(jobs),
  };
}
