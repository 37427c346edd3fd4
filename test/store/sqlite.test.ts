import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryLogger } from '../../src/log/logger';
import { openSqliteStorage, type SqliteStorage } from '../../src/store/sqlite/storage';
import { createSqliteTaskEventLog } from '../../src/store/sqlite/taskEvents';
import { createSqliteTaskRows } from '../../src/store/sqlite/taskRows';
import type { StoresFactory } from './contracts/factory';
import { graphStoreContract } from './contracts/graph.contract';
import { jobQueueContract } from './contracts/jobQueue.contract';
import { jobStoresContract } from './contracts/jobs.contract';
import { knowledgeStoreContract } from './contracts/knowledge.contract';
import { ledgerContract } from './contracts/ledger.contract';
import { memoryStoreContract } from './contracts/memory.contract';
import { sessionStoreContract } from './contracts/sessions.contract';
import { taskEventsContract, type TaskEventsFactory } from './contracts/taskEvents.contract';
import { timelineStoreContract } from './contracts/timelines.contract';
import { taskRowsContract, type TaskRowsFactory } from './contracts/taskRows.contract';
import { tenantScopeContract } from './contracts/tenants.contract';
import { vaultStoreContract } from './contracts/vault.contract';
import { vectorStoreContract } from './contracts/vectors.contract';

/** The embedded SQLite storage, a fresh file per test. */
const sqlite: StoresFactory = {
  name: 'SQLite',
  async open(options = {}) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-contract-'));
    const file = path.join(dir, 'lango.db');
    const open = () =>
      openSqliteStorage({
        file,
        logger: createMemoryLogger(),
        clock: options.clock ?? (() => new Date()),
        timelinesKept: options.timelinesKept,
      });
    let storage: SqliteStorage = open();
    return {
      get stores() {
        return storage.stores;
      },
      async reopen() {
        await storage.close();
        storage = open();
        return storage.stores;
      },
      async close() {
        await storage.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

sessionStoreContract(sqlite);
memoryStoreContract(sqlite);
knowledgeStoreContract(sqlite);
graphStoreContract(sqlite);
vectorStoreContract(sqlite, { search: 'memory' });
vaultStoreContract(sqlite);
ledgerContract(sqlite);
jobStoresContract(sqlite);
timelineStoreContract(sqlite);
jobQueueContract(sqlite);
tenantScopeContract(sqlite);

/** The A2A task rows on the SQLite file, with the storage's group commit. */
const sqliteTaskRows: TaskRowsFactory = {
  name: 'SQLite',
  async open(options) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-contract-'));
    const file = path.join(dir, 'lango.db');
    const logger = createMemoryLogger();
    const open = () => {
      const storage = openSqliteStorage({ file, logger, clock: () => new Date() });
      return {
        storage,
        ...createSqliteTaskRows({ db: storage.db, group: storage.group, logger, redact: options.redact }),
      };
    };
    let current = open();
    return {
      get tasks() {
        return current.tasks;
      },
      get pushConfigs() {
        return current.pushConfigs;
      },
      async reopen() {
        await current.storage.close();
        current = open();
      },
      async close() {
        await current.storage.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};
taskRowsContract(sqliteTaskRows);

/** The A2A task events on the SQLite file, in the storage's group commit, beside the task rows that migrate them. */
const sqliteTaskEvents: TaskEventsFactory = {
  name: 'SQLite',
  async open() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-contract-'));
    const logger = createMemoryLogger();
    const storage = openSqliteStorage({ file: path.join(dir, 'lango.db'), logger, clock: () => new Date() });
    const { tasks } = createSqliteTaskRows({ db: storage.db, group: storage.group, logger });
    return {
      events: createSqliteTaskEventLog({ db: storage.db, group: storage.group, logger }),
      rows: tasks,
      async backdate(taskIds, ms) {
        storage.group.flush();
        const update = storage.db.prepare('UPDATE a2a_task_events SET at = at - ? WHERE task_id = ?');
        for (const taskId of taskIds) update.run(ms, taskId);
      },
      async close() {
        await storage.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};
taskEventsContract(sqliteTaskEvents);
