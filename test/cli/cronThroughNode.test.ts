import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { runCli } from '../../src/cli/main';
import { cliWorkdir, spawnCli, startServe, type CliProcess } from '../support/cliProcess';
import { waitFor } from '../support/waitFor';

// Real minutes: a job every minute, watched for three of them.
jest.setTimeout(360_000);

interface RunRow {
  trigger: string;
  status: string;
  scheduled_for: string;
}

/** Reads the node's database (read-only) with `read`. */
function fromDatabase<T>(cwd: string, read: (db: Database.Database) => T): T {
  const db = new Database(path.join(cwd, '.lango', 'lango.db'), { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

const runs = (cwd: string) =>
  fromDatabase(
    cwd,
    (db) =>
      db
        .prepare("SELECT trigger, status, scheduled_for FROM cron_runs WHERE job_name = 'tick' ORDER BY id")
        .all() as RunRow[],
  );

/** When the job `tick` was added: its schedule counts minute boundaries from there. */
const anchorOf = (cwd: string) =>
  fromDatabase(cwd, (db) =>
    Date.parse(
      (db.prepare("SELECT anchor_at FROM cron_jobs WHERE name = 'tick'").get() as { anchor_at: string }).anchor_at,
    ),
  );

/** The serve log's "cron job ran" lines for the job `tick`. */
const ranLines = (log: string) => log.split('\n').filter((l) => l.includes('cron job ran') && l.includes('"tick"'));

describe('cron jobs and the CLI with a serving node', () => {
  let cwd: string;
  let serve: CliProcess | undefined;
  let chat: CliProcess | undefined;
  afterEach(async () => {
    await chat?.stop();
    await serve?.stop();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('a job every minute added from an open chat runs exactly three times in three minutes, in the serving process', async () => {
    cwd = cliWorkdir();
    const started = await startServe(cwd);
    serve = started.serve;
    chat = spawnCli(['chat'], cwd);
    const session = chat;
    session.child.stdin.write('cron_add {"name":"tick","schedule":"* * * * *","prompt":"hello"}\n');
    await waitFor(() => session.stdout().includes('✓ cron_add done'), 30_000, 'the chat to add the job');

    // A one-shot command while the node serves goes to the node: no second scheduler, no catch-up elsewhere.
    let out = '';
    const code = await runCli(['chat', 'cron_list', '{}'], {
      io: { out: (s) => void (out += s), err: () => {} },
      env: { LOG_LEVEL: 'error' },
      cwd,
      stopSignal: new Promise(() => {}),
    });
    expect([code, out]).toEqual([0, expect.stringContaining('"tick"')]);

    // The three minutes after the job was added (when the chat, however long it took to start, added it) hold
    // three minute boundaries: each ran once, and nothing else ran in them (a run of the next minute, after the
    // window, may already be under way: it is the job's fourth).
    const windowEnd = anchorOf(cwd) + 180_000;
    await waitFor(
      () => ranLines(serve!.stderr()).length >= 3,
      Math.max(0, windowEnd - Date.now()) + 60_000,
      'three runs of the job',
    );
    const rows = runs(cwd).filter((r) => Date.parse(r.scheduled_for) <= windowEnd);
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.trigger === 'schedule' && r.status === 'completed')).toBe(true);
    expect(new Set(rows.map((r) => r.scheduled_for)).size).toBe(3);
    // The chat process runs no job: it would have run these three too, and said so, by now.
    expect(session.stderr() + session.stdout()).not.toContain('cron job ran');

    session.child.stdin.end('exit\n');
    expect(await session.exited).toBe(0);
    expect(serve.child.exitCode).toBeNull();
  });
});
