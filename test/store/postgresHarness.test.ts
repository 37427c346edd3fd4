import { Client } from 'pg';
import { startTestPostgres } from '../support/postgres';
import { skipWithoutPostgres } from '../support/prerequisites';

if (!skipWithoutPostgres('the PostgreSQL test harness')) {
  it('starts a throwaway server on a free port, makes databases, stops and removes it', async () => {
    const pg = await startTestPostgres();
    try {
      const url = await pg.createDatabase();
      const client = new Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
      expect(rows[0].v).toMatch(/^\d+/);
      await client.end();
      await pg.dropDatabase(url);
    } finally {
      await pg.stop();
    }
    const after = new Client({ connectionString: pg.url, connectionTimeoutMillis: 2000 });
    await expect(after.connect()).rejects.toThrow();
  });
}
