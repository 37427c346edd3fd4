import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type SqliteDatabase } from '../../../src/store/sqlite/database';
import { createGroupCommit } from '../../../src/store/sqlite/groupCommit';

describe('the group commit shared by the stores of one database', () => {
  let dir: string;
  let db: SqliteDatabase;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-group-'));
    db = openDatabase(path.join(dir, 'lango.db'));
    db.exec('CREATE TABLE rows (store TEXT, value INTEGER)');
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const rows = () => db.prepare('SELECT store, value FROM rows ORDER BY store, value').all();

  it('runs every writer scheduled in one event-loop turn once, in one transaction', async () => {
    const group = createGroupCommit(db);
    const seen: boolean[] = [];
    const insert = db.prepare('INSERT INTO rows VALUES (?, ?)');
    const tasks = () => {
      seen.push(db.inTransaction);
      insert.run('tasks', 1);
    };
    const sessions = () => insert.run('sessions', 2);
    const first = group.schedule(tasks);
    expect(group.schedule(tasks)).toBe(first); // scheduled twice, written once
    const second = group.schedule(sessions);
    expect(rows()).toEqual([]); // nothing before the turn ends
    await Promise.all([first, second]);
    expect(seen).toEqual([true]);
    expect(rows()).toEqual([
      { store: 'sessions', value: 2 },
      { store: 'tasks', value: 1 },
    ]);
  });

  it("keeps one writer's rows when another writer fails, and tells only the failed one", async () => {
    const group = createGroupCommit(db);
    const insert = db.prepare('INSERT INTO rows VALUES (?, ?)');
    const broken = group.schedule(() => {
      insert.run('broken', 1); // rolled back with its savepoint
      throw new Error('disk says no');
    });
    const kept = group.schedule(() => insert.run('kept', 2));
    await expect(broken).rejects.toThrow('disk says no');
    await expect(kept).resolves.toBeUndefined();
    expect(rows()).toEqual([{ store: 'kept', value: 2 }]);
  });

  it('writes at once on flush, so a read right after sees the rows', () => {
    const group = createGroupCommit(db);
    const insert = db.prepare('INSERT INTO rows VALUES (?, ?)');
    void group.schedule(() => insert.run('now', 1));
    group.flush();
    expect(rows()).toEqual([{ store: 'now', value: 1 }]);
  });

  it('fails the writers scheduled when the database is already closed, rather than leave them waiting', async () => {
    const group = createGroupCommit(db);
    const late = group.schedule(() => undefined);
    db.close();
    await expect(late).rejects.toThrow(/not open/);
    db = openDatabase(path.join(dir, 'lango.db')); // for afterEach
  });
});
