import { Client } from 'pg';
import { NOOP_OBSERVER, type Observer } from '../../src/observation/observer';
import { openPgDatabase, type PgDatabase } from '../../src/store/postgres/database';
import { createPgGroupCommit, type PgGroupCommit } from '../../src/store/postgres/groupCommit';
import { skipWithoutPostgres } from '../support/prerequisites';
import { useMigratedDatabase } from '../support/postgresSuite';
import { waitFor } from '../support/waitFor';

/** The advisory lock a "slow" write waits on until the test lets it go. */
const LOCK = 4242;
/** How far the test moves the clock on while a slow commit runs: the hold after it is about this long. */
const HOUR_MS = 3_600_000;

if (!skipWithoutPostgres('the group commit on PostgreSQL')) {
  /**
   * The group commit's holds are measured on `performance.now()`, so the
   * test moves that clock on by an hour while a commit it blocks (on an
   * advisory lock it holds) is under way: that commit then "took" an hour,
   * and a group held after it would hold for about as long. A group that
   * must not be held commits at once; were it held, the test would time out
   * instead. Nothing here waits on a sleep or reads a duration.
   */
  describe('the group commit on PostgreSQL: when a group closes', () => {
    const database = useMigratedDatabase();
    let db: PgDatabase;
    let group: PgGroupCommit;
    let admin: Client;
    /** Each commit's statement count, in commit order. */
    let commits: number[];
    let offsetMs: number;

    beforeEach(async () => {
      db = openPgDatabase(database.url(), { pipeline: true });
      commits = [];
      const observer: Observer = {
        ...NOOP_OBSERVER,
        active: true,
        storeWrite: (_ms, statements) => commits.push(statements ?? 0),
      };
      group = createPgGroupCommit(db, observer);
      admin = new Client({ connectionString: database.url() });
      await admin.connect();
      offsetMs = 0;
      const now = performance.now.bind(performance);
      jest.spyOn(performance, 'now').mockImplementation(() => now() + offsetMs);
    });
    afterEach(async () => {
      jest.restoreAllMocks();
      await admin.end();
      await db.end();
    });

    /** Schedules one write of `sql`: each call is its own batch, as each store's is. */
    const write = (sql: string) => group.schedule(() => ({ statements: [{ text: sql }] }));

    /**
     * Starts a write that waits on {@link LOCK} (held by the test), resolves once its commit is under way in
     * the database, moves the clock on by an hour and returns the release and the write.
     */
    async function slowCommit(): Promise<{ release(): Promise<void>; done: Promise<void> }> {
      await admin.query('SELECT pg_advisory_lock($1)', [LOCK]);
      const done = write(`SELECT pg_advisory_xact_lock(${LOCK})`);
      await waitFor(
        async () =>
          (
            await admin.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`, [
              LOCK,
            ])
          ).rowCount === 1,
        20_000,
        'the slow commit waiting on the lock',
      );
      offsetMs += HOUR_MS;
      return {
        done,
        release: async () => void (await admin.query('SELECT pg_advisory_unlock($1)', [LOCK])),
      };
    }

    /** Resolves once the group has decided what follows the commit `done` ends: that decision is made in the same chain of promise callbacks that tells `done`'s caller, so one macrotask later it stands. */
    const afterCommitEnded = async (done: Promise<void>) => {
      await done;
      await new Promise((resolve) => setImmediate(resolve));
    };

    it('holds a small group gathered during a commit for the writes that follow it, and commits them together', async () => {
      const slow = await slowCommit();
      const during = write('SELECT 1'); // gathered while the slow commit runs
      await slow.release();
      await afterCommitEnded(slow.done);
      expect(commits).toEqual([1]);
      const after = [write('SELECT 2'), write('SELECT 3')]; // arrive after it ended: they join the held group
      // The hold would last about an hour: the flush closes it now.
      await group.flush();
      await Promise.all([during, ...after]);
      expect(commits).toEqual([1, 3]);
    });

    it('does not hold a write when nothing gathered during the commit before it (a lone caller)', async () => {
      const slow = await slowCommit();
      await slow.release();
      await slow.done;
      // Held, it would wait about as long as the last commit "took": an hour.
      await write('SELECT 1');
      expect(commits).toEqual([1, 1]);
    });

    it('closes a held group as soon as it is full', async () => {
      const slow = await slowCommit();
      const during = write('SELECT 1');
      await slow.release();
      await afterCommitEnded(slow.done);
      // Not full, it would hold for about an hour after `during` arrived.
      await Promise.all([during, ...Array.from({ length: 7 }, (_, i) => write(`SELECT ${i + 2}`))]);
      expect(commits).toEqual([1, 8]);
    });

    it('commits a write that fails alone without holding back the group it was gathered with', async () => {
      const slow = await slowCommit();
      const bad = write('SELECT no_such_column FROM schema_migrations');
      const good = write('SELECT 1');
      await slow.release();
      await slow.done;
      // Two writes gathered during the commit, a small group: it holds until the flush.
      const flushed = group.flush();
      await expect(bad).rejects.toThrow(/no_such_column/);
      await expect(good).resolves.toBeUndefined();
      await flushed;
    });
  });
}
