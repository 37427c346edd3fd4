import { createMemoryLogger } from '../../src/log/logger';
import { migratePostgres, openPostgresStorage, type PostgresStorage } from '../../src/store/postgres/storage';
import { emptyAllTables, skipWithoutPostgres, startTestPostgres, type TestPostgres } from '../support/postgres';
import type { StoresFactory } from './contracts/factory';
import { graphStoreContract } from './contracts/graph.contract';
import { jobStoresContract } from './contracts/jobs.contract';
import { knowledgeStoreContract } from './contracts/knowledge.contract';
import { ledgerContract } from './contracts/ledger.contract';
import { memoryStoreContract } from './contracts/memory.contract';
import { sessionStoreContract } from './contracts/sessions.contract';
import { vaultStoreContract } from './contracts/vault.contract';
import { vectorStoreContract } from './contracts/vectors.contract';

if (!skipWithoutPostgres('the store contracts on PostgreSQL')) {
  let server: TestPostgres | undefined;
  /** One database with every schema applied, emptied for each test (a database per test cost seconds each). */
  let url = '';
  beforeAll(async () => {
    server = await startTestPostgres();
    url = await server.createDatabase();
    await migratePostgres(url);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  /** PostgreSQL storage on a fresh database of the suite's throwaway server, per test. */
  const postgres: StoresFactory = {
    name: 'PostgreSQL',
    async open(options = {}) {
      if (!server) throw new Error('the test server did not start');
      await emptyAllTables(url);
      const open = () =>
        openPostgresStorage({ url, logger: createMemoryLogger(), clock: options.clock ?? (() => new Date()) });
      let storage: PostgresStorage = await open();
      return {
        get stores() {
          return storage.stores;
        },
        async reopen() {
          await storage.close();
          storage = await open();
          return storage.stores;
        },
        close: () => storage.close(),
      };
    },
  };

  sessionStoreContract(postgres);
  memoryStoreContract(postgres);
  knowledgeStoreContract(postgres);
  graphStoreContract(postgres);
  vectorStoreContract(postgres);
  vaultStoreContract(postgres);
  ledgerContract(postgres);
  jobStoresContract(postgres);
}
