import { NOOP_OBSERVER, type Observer } from '../../src/observation/observer';
import { openPgDatabase, type PgDatabase } from '../../src/store/postgres/database';
import { createPgGroupCommit, type PgGroupCommit } from '../../src/store/postgres/groupCommit';
import { skipWithoutPostgres } from '../support/postgres';
import { useMigratedDatabase } from '../support/postgresSuite';

if (!skipWithoutPostgres('the group commit on PostgreSQL')) {
  describe('the group commit on PostgreSQL: when a group closes', () => {
    const database = useMigratedDatabase();
    let db: PgDatabase;
    let group: PgGroupCommit;
    /** Each commit's statement count, in commit order. */
    let commits: number[];

    beforeEach(() => {
      db = openPgDatabase(database.url(), { pipeline: true });
      commits = [];
      const observer: Observer = {
        ...NOOP_OBSERVER,
        active: true,
        storeWrite: (_ms, statements) => commits.push(statements ?? 0),
      };
      group = createPgGroupCommit(db, observer);
    });
    afterEach(() => db.end());

    /** Schedules one write of `sql`: each call is its own batch, as each store's is. */
    const write = (sql: string) => group.schedule(() => ({ statements: [{ text: sql }] }));
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it('holds a small group gathered during a commit for the writes that follow it, and commits them together', async () => {
      const slow = write('SELECT pg_sleep(0.6)');
      await sleep(300);
      const during = write('SELECT 1'); // gathered while the slow commit runs
      await slow;
      await sleep(50);
      const after = [write('SELECT 2'), write('SELECT 3')]; // arrive after it ended: they join the held group
      await Promise.all([during, ...after]);
      expect(commits).toEqual([1, 3]);
    });

    it('does not hold a write when nothing gathered during the commit before it (a lone caller)', async () => {
      await write('SELECT pg_sleep(1)');
      const started = performance.now();
      await write('SELECT 1');
      // Held, it would wait about as long as the last commit took (1 s).
      expect(performance.now() - started).toBeLessThan(500);
      expect(commits).toEqual([1, 1]);
    });

    it('closes a held group as soon as it is full', async () => {
      const slow = write('SELECT pg_sleep(1)');
      await sleep(100);
      const during = write('SELECT 1');
      await slow;
      await sleep(50);
      const started = performance.now();
      await Promise.all([during, ...Array.from({ length: 7 }, (_, i) => write(`SELECT ${i + 2}`))]);
      // Not full, it would hold until about 1 s after `during` arrived.
      expect(performance.now() - started).toBeLessThan(500);
      expect(commits).toEqual([1, 8]);
    });

    it('commits a write that fails alone without holding back the group it was gathered with', async () => {
      const slow = write('SELECT pg_sleep(0.3)');
      await sleep(100);
      const bad = write('SELECT no_such_column FROM schema_migrations');
      const good = write('SELECT 1');
      await slow;
      await expect(bad).rejects.toThrow(/no_such_column/);
      await expect(good).resolves.toBeUndefined();
    });
  });
}
