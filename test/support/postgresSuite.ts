import { migratePostgres } from '../../src/store/postgres/storage';
import { startTestPostgres, type TestPostgres } from './postgres';

/**
 * One throwaway server and one database with every schema applied, for the
 * suite it is called in (registers its own beforeAll / afterAll); tests share
 * the database and empty it as they need (`emptyAllTables`).
 * @example
 * const database = useMigratedDatabase();
 * beforeEach(() => emptyAllTables(database.url()));
 */
export function useMigratedDatabase(): { url(): string } {
  let server: TestPostgres | undefined;
  let url = '';
  beforeAll(async () => {
    server = await startTestPostgres();
    url = await server.createDatabase();
    await migratePostgres(url);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });
  return {
    url: () => {
      if (!url) throw new Error('the test database is not ready (use url() inside tests and hooks)');
      return url;
    },
  };
}
