import { cronFamily } from '../../../src/tools/automator/families';
import { createMemoryLogger } from '../../../src/log/logger';
import { OWNER } from '../../../src/principal';
import {
  automatorDeps,
  createGate,
  createRecordingRunner,
  openFamily,
  openStorage,
  useTempDb,
  waitFor,
} from '../../support/automatorRunner';

type Opened = Awaited<ReturnType<typeof openFamily>>;

describe('cron family', () => {
  const temp = useTempDb();

  async function open(runner = createRecordingRunner((input) => `ran: ${input.text}`), clock?: () => Date) {
    const storage = openStorage(temp.file, clock);
    const logger = createMemoryLogger();
    const family = await openFamily(cronFamily, await automatorDeps({ storage, clock, logger }), {
      runner: runner.runner,
    });
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await family.close();
      await storage.close();
    };
    temp.onCleanup(close);
    return { ...family, runner, storage, logger, close };
  }

  const historyOf = async (cron: Opened, name: string) =>
    (await cron.call('cron_history', { name, limit: 100 })) as {
      trigger: string;
      status: string;
      result: string;
    }[];

  it('runs the prompt on an interval in session cron:<name> and records each run', async () => {
    const cron = await open();
    await cron.call('cron_add', { name: 'ping', schedule: 'every 150ms', prompt: 'check the disk' });

    const runs = await waitFor(
      async () => {
        const history = await historyOf(cron, 'ping');
        return history.filter((run) => run.status === 'completed').length >= 2 && history;
      },
      20_000,
      'two runs',
    );

    expect(runs[0]).toMatchObject({ trigger: 'schedule', result: 'ran: check the disk' });
    expect(cron.runner.inputs[0]).toMatchObject({ sessionId: 'cron:ping', text: 'check the disk' });
    expect(cron.runner.inputs.every((input) => input.sessionId === 'cron:ping')).toBe(true);
  });

  it('keeps a job scheduled across a restart and runs it again after the db file is reopened', async () => {
    const first = await open();
    await first.call('cron_add', { name: 'report', schedule: 'every 300ms', prompt: 'write the report' });
    await waitFor(
      async () => (await historyOf(first, 'report')).some((run) => run.status === 'completed'),
      20_000,
      'first run',
    );
    await first.close();
    const runsBefore = first.runner.inputs.length;

    const second = await open();
    const jobs = (await second.call('cron_list')) as { name: string; status: string; nextRunAt: string }[];
    expect(jobs).toEqual([
      expect.objectContaining({ name: 'report', status: 'active', nextRunAt: expect.any(String) }),
    ]);

    await waitFor(() => second.runner.inputs.length >= 1, 20_000, 'a run after the restart');
    expect(second.runner.inputs[0]).toMatchObject({ sessionId: 'cron:report', text: 'write the report' });
    expect(first.runner.inputs.length).toBe(runsBefore);
    const history = await waitFor(
      async () => {
        const runs = await historyOf(second, 'report');
        return runs.filter((run) => run.status === 'completed').length > runsBefore && runs;
      },
      20_000,
      'the run recorded',
    );
    expect(history.length).toBeGreaterThan(runsBefore);
  });

  it('gives a job missed while the node was down exactly one catch-up run, then schedules from now', async () => {
    const t0 = Date.parse('2026-03-01T08:00:00.000Z');
    let now = t0;
    const clock = () => new Date(now);
    const first = await open(undefined, clock);
    await first.call('cron_add', { name: 'hourly', schedule: 'every 1h', prompt: 'summarise the hour' });
    await first.close();

    // Down for five hours and ten minutes: five fire times missed.
    now = t0 + 5 * 3_600_000 + 10 * 60_000;
    const second = await open(undefined, clock);
    const history = await waitFor(
      async () => {
        const runs = await historyOf(second, 'hourly');
        return runs.length === 1 && runs[0].status === 'completed' && runs;
      },
      20_000,
      'the catch-up run',
    );

    expect(history).toEqual([expect.objectContaining({ trigger: 'catch-up', status: 'completed' })]);
    expect(second.runner.inputs).toHaveLength(1);
    const [job] = (await second.call('cron_list')) as { nextRunAt: string }[];
    expect(job.nextRunAt).toBe(new Date(t0 + 6 * 3_600_000).toISOString());
  });

  it('runs a one-time job at its ISO date and then marks it done', async () => {
    const cron = await open();
    // Two seconds ahead: still to come when cron_add, the next statement, checks it, however busy the machine.
    const at = new Date(Date.now() + 2_000).toISOString();
    const added = await cron.call('cron_add', { name: 'once', schedule: at, prompt: 'say hello once' });
    expect(added).toMatchObject({ kind: 'at', nextRunAt: at });

    await waitFor(
      async () => (await historyOf(cron, 'once')).some((run) => run.status === 'completed'),
      20_000,
      'the run',
    );
    const [job] = (await cron.call('cron_list')) as { status: string; nextRunAt: string | null }[];
    expect(job).toMatchObject({ status: 'done', nextRunAt: null });
    expect(cron.runner.inputs).toHaveLength(1);
  });

  it('refuses a bad cron expression, an unknown interval unit and a past date, naming what is wrong', async () => {
    const cron = await open();
    await expect(cron.call('cron_add', { name: 'bad', schedule: '* * 32 * *', prompt: 'x' })).rejects.toThrow(
      /invalid schedule "\* \* 32 \* \*".*day/,
    );
    await expect(cron.call('cron_add', { name: 'bad', schedule: 'every 3 fortnights', prompt: 'x' })).rejects.toThrow(
      /invalid interval in schedule "every 3 fortnights"/,
    );
    await expect(cron.call('cron_add', { name: 'bad', schedule: '2001-01-01T00:00:00Z', prompt: 'x' })).rejects.toThrow(
      /already passed/,
    );
    await expect(cron.call('cron_add', { name: 'bad name!', schedule: 'every 1h', prompt: 'x' })).rejects.toThrow(
      /invalid job name "bad name!"/,
    );
    expect(await cron.call('cron_list')).toEqual([]);
  });

  it('refuses a second job with the same name', async () => {
    const cron = await open();
    await cron.call('cron_add', { name: 'dup', schedule: 'every 1h', prompt: 'x' });
    await expect(cron.call('cron_add', { name: 'dup', schedule: 'every 2h', prompt: 'y' })).rejects.toThrow(
      'a cron job named "dup" already exists',
    );
  });

  it('does not run a paused job, and runs it again once resumed', async () => {
    const cron = await open();
    await cron.call('cron_add', { name: 'tick', schedule: 'every 400ms', prompt: 'tick' });
    expect(await cron.call('cron_pause', { name: 'tick' })).toMatchObject({ status: 'paused', nextRunAt: null });
    // A witness on the same schedule, added after it: had the paused job still been due, it would have run
    // before the witness's second run.
    await cron.call('cron_add', { name: 'witness', schedule: 'every 400ms', prompt: 'witness' });
    const ran = (name: string) => cron.runner.inputs.filter((input) => input.sessionId === `cron:${name}`).length;
    await waitFor(() => ran('witness') >= 2, 20_000, 'two runs of the witness');
    expect(ran('tick')).toBe(0);

    expect(await cron.call('cron_resume', { name: 'tick' })).toMatchObject({ status: 'active' });
    await waitFor(() => ran('tick') >= 1, 20_000, 'a run after resume');
  });

  it('removes a job, cancelling its run under way and dropping its history', async () => {
    const gate = createGate();
    const cron = await open(
      createRecordingRunner(async () => {
        await gate.opened;
        return 'never';
      }),
    );
    await cron.call('cron_add', { name: 'slow', schedule: 'every 100ms', prompt: 'take your time' });
    await waitFor(() => cron.runner.active === 1, 20_000, 'the run to start');

    expect(await cron.call('cron_remove', { name: 'slow' })).toEqual({ removed: 'slow' });
    await waitFor(() => cron.runner.active === 0, 20_000, 'the run to be cancelled');
    expect(await cron.call('cron_list')).toEqual([]);
    await expect(cron.call('cron_history', { name: 'slow' })).rejects.toThrow('no cron job named "slow"');
    gate.open();
  });

  it('skips a fire time while the previous run of the job is still going', async () => {
    const gate = createGate();
    const cron = await open(
      createRecordingRunner(async () => {
        await gate.opened;
        return 'slow answer';
      }),
    );
    await cron.call('cron_add', { name: 'overlap', schedule: 'every 100ms', prompt: 'slow work' });
    await waitFor(() => cron.runner.active === 1, 20_000, 'the run to start');
    await waitFor(
      () => cron.logger.records.some((r) => r.message === 'cron run skipped: the previous run is still going'),
      20_000,
      'a fire time to come and be skipped',
    );

    expect(cron.runner.maxActive).toBe(1);
    expect(cron.runner.inputs).toHaveLength(1);
    gate.open();
  });

  it('marks a run left running by a crashed process as failed "node restarted" at start', async () => {
    const storage = openStorage(temp.file);
    const store = storage.stores.cron;
    const at = new Date(Date.now() + 3_600_000).toISOString();
    await store.insert(OWNER, {
      name: 'crashed',
      kind: 'every',
      schedule: 'every 1h',
      prompt: 'x',
      status: 'active',
      anchorAt: new Date().toISOString(),
      nextRunAt: at,
      lastRunAt: null,
      createdAt: new Date().toISOString(),
    });
    await store.startRun(OWNER, {
      jobName: 'crashed',
      trigger: 'schedule',
      scheduledFor: at,
      startedAt: new Date().toISOString(),
    });
    await storage.close();

    const cron = await open();
    expect(await historyOf(cron, 'crashed')).toEqual([
      expect.objectContaining({ status: 'failed', result: 'node restarted' }),
    ]);
  });

  it('leaves no timer behind: a closed family never runs its jobs again', async () => {
    const cron = await open();
    await cron.call('cron_add', { name: 'quiet', schedule: 'every 100ms', prompt: 'x' });
    const [job] = (await cron.call('cron_list')) as { nextRunAt: string }[];
    await cron.close();
    const count = cron.runner.inputs.length;
    const logged = cron.logger.records.length;
    // A timer left behind was due by then: one set to fire after it fires after it would have, and the run it
    // would have started (or the error of a store already closed) would be in by then.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(job.nextRunAt) - Date.now()) + 1));
    expect(cron.runner.inputs.length).toBe(count);
    expect(cron.logger.records.slice(logged)).toEqual([]);
  });
});
