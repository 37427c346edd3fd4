import { Client } from 'pg';
import { createMemoryLogger } from '../../src/log/logger';
import { createPgListener, type PgListener } from '../../src/store/postgres/listener';
import { skipWithoutPostgres } from '../support/prerequisites';
import { useMigratedDatabase } from '../support/postgresSuite';
import { waitFor } from '../support/waitFor';

/**
 * The replica's LISTEN connection on a throwaway PostgreSQL: channels held
 * by count are listened on only while held, and again after the connection
 * is dropped and comes back.
 */
if (!skipWithoutPostgres("the PostgreSQL listener's held channels")) {
  describe("a replica's LISTEN connection", () => {
    const database = useMigratedDatabase();
    let listener: PgListener | undefined;
    let admin: Client;
    beforeEach(async () => {
      admin = new Client({ connectionString: database.url() });
      await admin.connect();
    });
    afterEach(async () => {
      await listener?.close();
      listener = undefined;
      await admin.end();
    });

    /** The payloads received on each channel, by channel. */
    function record(l: PgListener, channels: string[]) {
      const heard = new Map(channels.map((c) => [c, [] as string[]]));
      for (const channel of channels) l.on(channel, (payload) => heard.get(channel)!.push(payload));
      return heard;
    }
    const notify = (channel: string, payload: string) => admin.query('SELECT pg_notify($1, $2)', [channel, payload]);

    it('hears a held channel only while held (by count), and again after the connection is dropped', async () => {
      const logger = createMemoryLogger();
      listener = createPgListener({ url: database.url(), channels: ['always_on'], logger });
      const heard = record(listener, ['always_on', 'held_only']);

      const first = listener.hold('held_only');
      const second = listener.hold('held_only');
      await first.listening;
      await second.listening;
      await notify('held_only', 'one');
      await waitFor(() => heard.get('held_only')!.length === 1, 20_000, 'the held channel to be heard');

      // One hold left: still listened on.
      await first.release();
      await notify('held_only', 'two');
      await waitFor(() => heard.get('held_only')!.length === 2, 20_000, 'the channel still held once');

      // Dropped: the connection comes back listening on the fixed channels and the one still held.
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`,
      );
      await waitFor(() => logger.records.some((r) => r.message === 'listen connection back'), 20_000, 'the reconnect');
      await notify('held_only', 'three');
      await notify('always_on', 'fixed');
      await waitFor(
        () => heard.get('held_only')!.includes('three') && heard.get('always_on')!.includes('fixed'),
        20_000,
        'both channels heard after the reconnect',
      );

      // The last hold released: UNLISTEN, nothing more heard on it; the fixed channel goes on.
      await second.release();
      await second.release();
      await notify('held_only', 'four');
      await notify('always_on', 'after');
      // Heard in commit order: had the released channel still been listened to, 'four' would have come first.
      await waitFor(() => heard.get('always_on')!.includes('after'), 20_000, 'the fixed channel');
      expect(heard.get('held_only')).not.toContain('four');
    });

    it('refuses a channel name that is not a plain identifier', () => {
      listener = createPgListener({ url: database.url(), channels: [], logger: createMemoryLogger() });
      expect(() => listener!.hold('x; DROP TABLE a2a_tasks')).toThrow('not a channel name');
    });
  });
}
