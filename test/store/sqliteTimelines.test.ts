import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createMemoryLogger } from '../../src/log/logger';
import { OWNER } from '../../src/principal';
import { openSqliteStorage } from '../../src/store/sqlite/storage';
import type { TaskTimeline } from '../../src/store/timelines';

const turn = (id: string, minute: number): TaskTimeline => ({
  id,
  sessionId: 'ctx-1',
  caller: 'owner',
  startedAt: new Date(Date.UTC(2026, 4, 1, 10, minute)).toISOString(),
  ms: 5,
  status: 'completed',
  steps: [{ kind: 'agent', name: 'lango-orchestrator', atMs: 0, ms: 4 }],
});

/** The SQLite timelines' ring of slots: renumbered on open to the turns kept, and migrated from the table before it. */
describe('SQLite timeline ring', () => {
  let dir: string;
  let file: string;
  let now = Date.UTC(2026, 4, 1, 12);
  const open = (timelinesKept: number) =>
    openSqliteStorage({ file, logger: createMemoryLogger(), clock: () => new Date(now), timelinesKept });
  const listed = async (storage: ReturnType<typeof open>) =>
    (await storage.stores.timelines.list(OWNER, { limit: 20 })).map((t) => t.id);
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-ring-'));
    file = path.join(dir, 'lango.db');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps the newest when opened to keep fewer, and goes on from the oldest slot when opened to keep more', async () => {
    let storage = open(5);
    await storage.stores.timelines.save([1, 2, 3, 4, 5, 6, 7].map((m) => turn(`t${m}`, m)));
    expect(await listed(storage)).toEqual(['t7', 't6', 't5', 't4', 't3']);
    await storage.close();

    storage = open(2);
    expect(await listed(storage)).toEqual(['t7', 't6']);
    expect(
      (storage.db.prepare('SELECT slot FROM task_timelines ORDER BY slot').all() as { slot: number }[]).map(
        (r) => r.slot,
      ),
    ).toEqual([0, 1]);
    await storage.stores.timelines.save([turn('t8', 8)]);
    expect(await listed(storage)).toEqual(['t8', 't7']);
    await storage.close();

    storage = open(4);
    await storage.stores.timelines.save([turn('t9', 9), turn('t10', 10)]);
    expect(await listed(storage)).toEqual(['t10', 't9', 't8', 't7']);
    await storage.stores.timelines.save([turn('t11', 11)]);
    expect(await listed(storage)).toEqual(['t11', 't10', 't9', 't8']);
    await storage.close();
  });

  it('moves the turns of the table before the ring into it, oldest first', async () => {
    const db = new Database(file);
    db.exec(`CREATE TABLE schema_migrations (
        store TEXT NOT NULL, step INTEGER NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (store, step));
      INSERT INTO schema_migrations VALUES ('task_timelines', 0, '2026-05-01'), ('task_timelines', 1, '2026-05-01');
      CREATE TABLE task_timelines (
        id TEXT PRIMARY KEY, owner TEXT NOT NULL, task_id TEXT, session_id TEXT NOT NULL, replica TEXT,
        started_at TEXT NOT NULL, ms INTEGER, status TEXT, agent TEXT, asked TEXT, error TEXT, steps TEXT NOT NULL);
      CREATE INDEX task_timelines_by_start ON task_timelines (started_at, id);`);
    const insert = db.prepare(
      `INSERT INTO task_timelines (id, owner, session_id, started_at, ms, status, steps) VALUES (?, 'owner', 'ctx-1', ?, 5, 'completed', '[]')`,
    );
    for (const m of [3, 1, 2]) insert.run(`t${m}`, turn(`t${m}`, m).startedAt);
    db.close();

    const storage = open(200);
    expect(await listed(storage)).toEqual(['t3', 't2', 't1']);
    await storage.stores.timelines.save([turn('t4', 4)]);
    expect(await listed(storage)).toEqual(['t4', 't3', 't2', 't1']);
    await storage.close();
  });

  it('writes a system prompt turns share once, and lets it go once no kept turn names it and it has idled', async () => {
    const prompt = `You are the orchestrator. ${'Route each request to the specialist that owns it. '.repeat(40)}`;
    const asked = (id: string, minute: number): TaskTimeline => ({
      ...turn(id, minute),
      exchanges: [{ step: 1, instruction: prompt, messages: [], tools: [], answer: { text: 'Hi.', toolCalls: [] } }],
    });
    const storage = open(3);
    // A read commits what is queued: each save is written at once, not a second later.
    const save = async (turns: TaskTimeline[]) => {
      await Promise.all([storage.stores.timelines.save(turns), listed(storage)]);
    };
    for (const m of [1, 2, 3]) await save([asked(`t${m}`, m)]);
    const rows = () =>
      storage.db.prepare('SELECT id, exchanges FROM task_timelines ORDER BY started_at').all() as Array<{
        id: string;
        exchanges: string;
      }>;
    // The first sighting is kept in its row; from the second on the row names it and it is written once.
    expect(rows().map((row) => row.exchanges.includes(prompt))).toEqual([true, false, false]);
    expect(rows()[2].exchanges.length).toBeLessThan(300);
    const prompts = () => storage.db.prepare('SELECT text FROM timeline_prompts').all() as Array<{ text: string }>;
    expect(prompts()).toEqual([{ text: prompt }]);

    // Kept turns still name it after an hour: the prune that runs with the next write keeps it.
    now += 60 * 60_000;
    await save([turn('t4', 4)]);
    expect(prompts()).toHaveLength(1);
    // Once the ring has let every turn naming it go, the next prune after a minute deletes it.
    await save([turn('t5', 5), turn('t6', 6)]);
    now += 61_000;
    await save([turn('t7', 7)]);
    expect(prompts()).toEqual([]);
    await storage.close();
  });
});
