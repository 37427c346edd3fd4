import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryLogger } from '../../../src/log/logger';
import { startBackgroundCheckpoints } from '../../../src/store/sqlite/checkpointer';
import { openDatabase, type SqliteDatabase } from '../../../src/store/sqlite/database';
import { waitFor } from '../../support/waitFor';

describe('background WAL checkpoints', () => {
  let dir: string;
  let db: SqliteDatabase;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-checkpoint-'));
    file = path.join(dir, 'lango.db');
    db = openDatabase(file);
    db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT)');
  });
  afterEach(() => {
    if (db.open) db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const pragma = (name: string) => db.pragma(name, { simple: true }) as number;
  const write = (n: number) => {
    const insert = db.prepare('INSERT INTO rows (body) VALUES (?)');
    for (let i = 0; i < n; i++) db.transaction(() => insert.run('x'.repeat(2000)))();
  };

  it('copies the WAL into the database from a worker, and the connection checkpoints only as a backstop', async () => {
    const stop = startBackgroundCheckpoints({ db, file, logger: createMemoryLogger(), intervalMs: 20 });
    expect(pragma('wal_autocheckpoint')).toBe(4000);
    const before = fs.statSync(file).size;
    write(200); // about 100 pages: far below the connection's own threshold, so only the worker copies them
    // Copied pages land in the database file itself (until then they live only in the WAL).
    await waitFor(() => fs.statSync(file).size >= before + 200 * 2000, 20_000, 'the worker to copy the WAL');
    await stop();
    expect(pragma('wal_autocheckpoint')).toBe(1000);
    db.close();
    const reopened = openDatabase(file);
    expect((reopened.prepare('SELECT count(*) AS n FROM rows').get() as { n: number }).n).toBe(200);
    reopened.close();
  });

  it('gives checkpoints back to the connection when the worker cannot run', async () => {
    const logger = createMemoryLogger();
    const stop = startBackgroundCheckpoints({ db, file: path.join(dir, 'missing.db'), logger, intervalMs: 20 });
    await waitFor(() => pragma('wal_autocheckpoint') === 1000, 20_000, 'the connection to checkpoint on commit again');
    const stopped = () => logger.records.filter((r) => /background checkpoints stopped/.test(r.message)).length;
    await waitFor(() => stopped() === 1, 20_000, 'the stop to be logged');
    // The failed worker ends ('error', then 'exit'): stopping waits for that end, so both have been heard.
    await stop();
    expect(stopped()).toBe(1);
  });
});
