import { OWNER } from '../../../src/principal';
import { backgroundFamily } from '../../../src/tools/automator/families';
import type { TurnInput } from '../../../src/agent/turn';
import {
  automatorDeps,
  createGate,
  createRecordingRunner,
  openFamily,
  openStorage,
  useTempDb,
  waitFor,
} from '../../support/automatorRunner';

describe('background family', () => {
  const temp = useTempDb();

  async function open(respond: (input: TurnInput) => string | Promise<string>, concurrency = 2) {
    const runner = createRecordingRunner(respond);
    const storage = openStorage(temp.file);
    const family = await openFamily(
      backgroundFamily,
      await automatorDeps({ storage, config: { background: { concurrency } } }),
      { runner: runner.runner },
    );
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await family.close();
      await storage.close();
    };
    temp.onCleanup(close);
    return { ...family, runner, close };
  }

  const statusOf = async (bg: Awaited<ReturnType<typeof open>>, id: string) =>
    ((await bg.call('bg_status', { id })) as { status: string }).status;

  it('runs a submitted prompt in session bg:<id> and keeps its result', async () => {
    const bg = await open((input) => `answer to ${input.text}`);
    const submitted = await bg.call('bg_submit', { prompt: 'count the files', label: 'files' });
    expect(submitted).toMatchObject({ id: expect.stringMatching(/^bg-[0-9a-f]{8}$/), label: 'files' });

    await waitFor(async () => (await statusOf(bg, submitted.id)) === 'completed', 20_000, 'completion');
    expect(await bg.call('bg_result', { id: submitted.id })).toMatchObject({
      status: 'completed',
      result: 'answer to count the files',
    });
    expect(bg.runner.inputs[0]).toMatchObject({ sessionId: `bg:${submitted.id}`, text: 'count the files' });
  });

  it('never runs more jobs at once than background.concurrency, and runs the rest in order', async () => {
    const gates = new Map<string, ReturnType<typeof createGate>>();
    const bg = await open(async (input) => {
      const gate = createGate();
      gates.set(input.text, gate);
      await gate.opened;
      return `done ${input.text}`;
    }, 2);
    const ids: string[] = [];
    for (const n of [1, 2, 3, 4]) ids.push((await bg.call('bg_submit', { prompt: `job ${n}` })).id);

    await waitFor(() => bg.runner.active === 2, 20_000, 'two jobs running');
    expect(await Promise.all(ids.map((id) => statusOf(bg, id)))).toEqual(['running', 'running', 'queued', 'queued']);
    expect((await bg.call('bg_list', { status: 'queued' })).map((job: { id: string }) => job.id)).toEqual([
      ids[3],
      ids[2],
    ]);

    gates.get('job 1')?.open();
    await waitFor(() => gates.has('job 3'), 20_000, 'job 3 to start');
    expect(bg.runner.active).toBe(2);
    for (const text of ['job 2', 'job 3']) gates.get(text)?.open();
    await waitFor(() => gates.has('job 4'), 20_000, 'job 4 to start');
    gates.get('job 4')?.open();

    await waitFor(
      async () => (await Promise.all(ids.map((id) => statusOf(bg, id)))).every((s) => s === 'completed'),
      20_000,
      'all done',
    );
    expect(bg.runner.maxActive).toBe(2);
    expect(bg.runner.inputs.map((input) => input.text)).toEqual(['job 1', 'job 2', 'job 3', 'job 4']);
  });

  it('cancels a running job through its AbortSignal and a queued one before it starts', async () => {
    const gate = createGate();
    const bg = await open(async () => {
      await gate.opened;
      return 'too late';
    }, 1);
    const running = await bg.call('bg_submit', { prompt: 'long task' });
    const queued = await bg.call('bg_submit', { prompt: 'waiting task' });
    await waitFor(() => bg.runner.active === 1, 20_000, 'the first job to start');

    expect(await bg.call('bg_cancel', { id: queued.id })).toMatchObject({ status: 'cancelled' });
    await bg.call('bg_cancel', { id: running.id });
    await waitFor(async () => (await statusOf(bg, running.id)) === 'cancelled', 20_000, 'the running job cancelled');

    expect(bg.runner.inputs.map((input) => input.text)).toEqual(['long task']);
    expect(bg.runner.inputs[0].signal?.aborted).toBe(true);
    expect(await bg.call('bg_result', { id: running.id })).toMatchObject({
      status: 'cancelled',
      result: 'cancelled by request',
    });
    await expect(bg.call('bg_cancel', { id: running.id })).rejects.toThrow(/already finished \(cancelled\)/);
    gate.open();
  });

  it('says a job is not finished yet, and names an unknown id', async () => {
    const gate = createGate();
    const bg = await open(async () => {
      await gate.opened;
      return 'x';
    });
    const job = await bg.call('bg_submit', { prompt: 'slow' });
    expect(await bg.call('bg_result', { id: job.id })).toMatchObject({ result: null, note: 'not finished yet' });
    await expect(bg.call('bg_status', { id: 'bg-nothere' })).rejects.toThrow('no background job with id "bg-nothere"');
    gate.open();
  });

  it('records a failed turn as a failed job with its reason', async () => {
    const bg = await open(() => {
      throw new Error('model unreachable');
    });
    const job = await bg.call('bg_submit', { prompt: 'x' });
    await waitFor(async () => (await statusOf(bg, job.id)) === 'failed', 20_000, 'failure');
    expect(await bg.call('bg_result', { id: job.id })).toMatchObject({ status: 'failed', result: 'model unreachable' });
  });

  it('fails the job running at shutdown and runs the still-queued one after the db file is reopened', async () => {
    const never = createGate();
    const first = await open(async () => {
      await never.opened;
      return 'unreachable';
    }, 1);
    const running = await first.call('bg_submit', { prompt: 'long job' });
    const queued = await first.call('bg_submit', { prompt: 'next job' });
    await waitFor(() => first.runner.active === 1, 20_000, 'the first job to start');
    await first.close();
    never.open();

    const second = await open((input) => `finished ${input.text}`, 1);
    expect(await second.call('bg_result', { id: running.id })).toMatchObject({
      status: 'failed',
      result: 'node shut down while the job was running',
    });
    await waitFor(async () => (await statusOf(second, queued.id)) === 'completed', 20_000, 'the queued job');
    expect(second.runner.inputs.map((input) => input.text)).toEqual(['next job']);
  });

  it('marks jobs running when the node died as failed "node restarted" and runs the queued ones', async () => {
    const storage = openStorage(temp.file);
    const store = storage.stores.background;
    const now = new Date().toISOString();
    await store.insert(OWNER, { id: 'bg-dead0001', label: null, prompt: 'was running', createdAt: now });
    await store.markRunning('bg-dead0001', now);
    await store.insert(OWNER, { id: 'bg-wait0001', label: null, prompt: 'was queued', createdAt: now });
    await storage.close();

    const bg = await open((input) => `ok ${input.text}`);
    expect(await bg.call('bg_result', { id: 'bg-dead0001' })).toMatchObject({
      status: 'failed',
      result: 'node restarted',
    });
    await waitFor(async () => (await statusOf(bg, 'bg-wait0001')) === 'completed', 20_000, 'the queued job');
    expect(bg.runner.inputs.map((input) => input.text)).toEqual(['was queued']);
  });
});
