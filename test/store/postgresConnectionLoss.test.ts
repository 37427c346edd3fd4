import { Client } from 'pg';
import { openPgDatabase, rows, transaction, type PgDatabase } from '../../src/store/postgres/database';
import { skipWithoutPostgres } from '../support/prerequisites';
import { useMigratedDatabase } from '../support/postgresSuite';

/**
 * A connection the server ends while the node holds it (a database stopped,
 * restarted or failed over between two statements of a transaction): the
 * transaction fails, the process goes on, and the pool serves again on a new
 * connection. pg emits `error` on a checked-out client with no listener of
 * its own, which would otherwise end the process (it ended a replica in a
 * cluster test when PostgreSQL stopped).
 */
if (!skipWithoutPostgres('a connection lost inside a transaction')) {
  describe('a PostgreSQL connection lost while checked out', () => {
    const database = useMigratedDatabase();
    let db: PgDatabase;
    let admin: Client;
    beforeEach(async () => {
      db = openPgDatabase(database.url());
      admin = new Client({ connectionString: database.url() });
      await admin.connect();
    });
    afterEach(async () => {
      await admin.end();
      await db.end();
    });

    it('fails the transaction, not the process, and the pool serves on a new connection', async () => {
      const outcome = transaction(db, async (client) => {
        const [{ pid }] = await rows<{ pid: number }>(client, 'SELECT pg_backend_pid() AS pid');
        const ended = new Promise((resolve) => client.once('end', resolve));
        // Ended between two statements: the server's FATAL arrives with no query of the client's in flight.
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        await ended;
        await client.query('SELECT 1');
        return pid;
      });
      await expect(outcome).rejects.toThrow(/not queryable|terminat/i);
      const [{ pid }] = await rows<{ pid: number }>(db, 'SELECT pg_backend_pid() AS pid');
      expect(pid).toEqual(expect.any(Number));
      expect(db.totalCount).toBe(1);
    });
  });
}
