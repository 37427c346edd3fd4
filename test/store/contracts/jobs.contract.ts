import { namedCaller, OWNER } from '../../../src/principal';
import type { CronJob } from '../../../src/store/jobs';
import { useStores, type StoresFactory } from './factory';

const alice = namedCaller('bearer:alice');
const bob = namedCaller('bearer:bob');
const now = '2026-05-01T10:00:00.000Z';
const job = (name: string): Omit<CronJob, 'owner'> => ({
  name,
  kind: 'every',
  schedule: 'every 1h',
  prompt: `run ${name}`,
  status: 'active',
  anchorAt: now,
  nextRunAt: '2026-05-01T11:00:00.000Z',
  lastRunAt: null,
  createdAt: now,
});

/** What every job store (cron, background, workflows, background commands) must do. */
export function jobStoresContract(factory: StoresFactory): void {
  describe(`job stores (${factory.name})`, () => {
    const opened = useStores(factory);
    const stores = () => opened().stores;

    it('keeps cron jobs and their runs, names unique within a principal, runs failed after a crash', async () => {
      const cron = stores().cron;
      expect(await cron.insert(alice, job('daily'))).toBe(true);
      expect(await cron.insert(alice, job('daily'))).toBe(false);
      expect(await cron.insert(bob, job('daily'))).toBe(true);
      await cron.update(alice, 'daily', { status: 'paused', nextRunAt: null });
      expect(await cron.get(alice, 'daily')).toMatchObject({
        owner: 'bearer:alice',
        status: 'paused',
        nextRunAt: null,
      });
      expect(await cron.get(bob, 'daily')).toMatchObject({ status: 'active' });
      expect(await cron.get(OWNER, 'daily')).toBeUndefined();
      const runId = await cron.startRun(bob, {
        jobName: 'daily',
        trigger: 'schedule',
        scheduledFor: now,
        startedAt: now,
      });
      if (typeof runId !== 'string') throw new Error('the first run of a fire time is recorded');
      await cron.startRun(bob, { jobName: 'daily', trigger: 'catch-up', scheduledFor: now, startedAt: now });
      await cron.finishRun(runId, { status: 'completed', finishedAt: now, result: 'ok', author: 'operator' });
      expect(await cron.failInterruptedRuns(now)).toBe(1);
      expect((await cron.history(bob, 'daily', 10)).map((r) => [r.trigger, r.status, r.result])).toEqual([
        ['catch-up', 'failed', 'node restarted'],
        ['schedule', 'completed', 'ok'],
      ]);
      expect(await cron.history(alice, 'daily', 10)).toEqual([]);
      expect((await cron.list(alice)).map((j) => j.owner)).toEqual(['bearer:alice']);
      expect((await cron.list(OWNER)).map((j) => j.owner)).toEqual(['bearer:alice', 'bearer:bob']);
      expect(await cron.all()).toHaveLength(2);
      expect(await cron.remove(alice, 'daily')).toBe(true);
      expect(await cron.remove(alice, 'daily')).toBe(false);
      expect((await cron.all()).map((j) => j.owner)).toEqual(['bearer:bob']);
    });

    it('keeps background jobs in submission order, visible to their owner and the owner of the node', async () => {
      const background = stores().background;
      await background.insert(alice, { id: 'bg-1', label: 'a', prompt: 'first', createdAt: now });
      await background.insert(bob, { id: 'bg-2', label: null, prompt: 'second', createdAt: now });
      await background.insert(alice, { id: 'bg-3', label: null, prompt: 'third', createdAt: now });
      expect((await background.queued()).map((j) => [j.id, j.owner, j.prompt])).toEqual([
        ['bg-1', 'bearer:alice', 'first'],
        ['bg-2', 'bearer:bob', 'second'],
        ['bg-3', 'bearer:alice', 'third'],
      ]);
      expect(await background.markRunning('bg-1', now)).toBe(true);
      // A job is claimed once: a second claim (another replica's, or a late one) is refused.
      expect(await background.markRunning('bg-1', now)).toBe(false);
      expect(await background.markRunning('bg-3', now)).toBe(true);
      await background.finish('bg-3', { status: 'completed', finishedAt: now, result: 'done', author: 'operator' });
      expect(await background.failInterrupted(now)).toBe(1);
      expect(await background.get(alice, 'bg-1')).toMatchObject({ status: 'failed', result: 'node restarted' });
      expect(await background.get(bob, 'bg-1')).toBeUndefined();
      expect(await background.get(OWNER, 'bg-1')).toMatchObject({ owner: 'bearer:alice' });
      expect((await background.list(alice, { limit: 10 })).map((j) => j.id)).toEqual(['bg-3', 'bg-1']);
      expect((await background.list(alice, { status: 'completed', limit: 10 })).map((j) => j.id)).toEqual(['bg-3']);
      expect((await background.list(OWNER, { limit: 10 })).map((j) => j.id)).toEqual(['bg-3', 'bg-2', 'bg-1']);
      expect((await background.queued()).map((j) => j.id)).toEqual(['bg-2']);
    });

    it('keeps workflows and runs with their steps; definitions are named within a principal', async () => {
      const workflows = stores().workflows;
      await workflows.save(alice, { name: 'digest', description: 'd', yaml: 'v1', savedAt: now });
      await workflows.save(alice, { name: 'digest', description: 'd', yaml: 'v2', savedAt: now });
      await workflows.save(bob, { name: 'digest', description: null, yaml: 'bob', savedAt: now });
      expect((await workflows.getSaved(alice, 'digest'))?.yaml).toBe('v2');
      expect((await workflows.getSaved(bob, 'digest'))?.yaml).toBe('bob');
      expect(await workflows.getSaved(OWNER, 'digest')).toBeUndefined();
      expect((await workflows.listSaved(OWNER)).map((w) => w.owner)).toEqual(['bearer:alice', 'bearer:bob']);
      expect((await workflows.listSaved(bob)).map((w) => w.yaml)).toEqual(['bob']);

      await workflows.createRun(alice, { id: 'wf-1', workflowName: 'digest', yaml: 'v2', startedAt: now }, [
        { id: 'a', agent: 'operator' },
        { id: 'b' },
      ]);
      await workflows.startStep('wf-1', 'a', now);
      await workflows.finishStep('wf-1', 'a', {
        status: 'completed',
        finishedAt: now,
        result: 'A',
        author: 'operator',
      });
      await workflows.startStep('wf-1', 'b', now);
      expect(await workflows.failInterrupted(now)).toBe(1);
      expect(await workflows.getRun(alice, 'wf-1')).toMatchObject({ status: 'failed', error: 'node restarted' });
      expect((await workflows.steps(alice, 'wf-1')).map((s) => [s.stepId, s.agent, s.status])).toEqual([
        ['a', 'operator', 'completed'],
        ['b', null, 'failed'],
      ]);
      expect(await workflows.getRun(bob, 'wf-1')).toBeUndefined();
      expect(await workflows.steps(bob, 'wf-1')).toEqual([]);
      expect(await workflows.listRuns(bob, 10)).toEqual([]);
      expect((await workflows.listRuns(OWNER, 10)).map((r) => r.id)).toEqual(['wf-1']);
      await workflows.finishRun('wf-1', { status: 'cancelled', finishedAt: now, error: 'by hand' });
      expect(await workflows.getRun(OWNER, 'wf-1')).toMatchObject({ status: 'cancelled', error: 'by hand' });
    });

    it('keeps background commands, marks those a dead process left running as lost', async () => {
      const execJobs = stores().execJobs;
      await execJobs.insert(alice, { id: 'job-1', command: 'sleep 9', cwd: '/', pid: 10, startedAt: now });
      await execJobs.insert(bob, { id: 'job-2', command: 'echo hi', cwd: '/w', pid: null, startedAt: now });
      await execJobs.finish('job-2', { status: 'exited', exitCode: 0, signal: null, endedAt: now, outputBytes: 3 });
      expect(await execJobs.markLost(now)).toBe(1);
      expect(await execJobs.get(alice, 'job-1')).toMatchObject({ owner: 'bearer:alice', status: 'lost', pid: 10 });
      expect(await execJobs.get(alice, 'job-2')).toBeUndefined();
      expect(await execJobs.get(OWNER, 'job-2')).toMatchObject({ status: 'exited', exitCode: 0, outputBytes: 3 });
      expect((await execJobs.list(bob, 10)).map((j) => j.id)).toEqual(['job-2']);
      expect(await execJobs.list(OWNER, 10)).toHaveLength(2);
    });

    it('gives each node one identity, kept across a restart', async () => {
      const id = await stores().node.nodeId();
      expect(id).toMatch(/^urn:lango:[0-9a-f-]{36}$/);
      expect(await stores().node.nodeId()).toBe(id);
      expect(await (await opened().reopen()).node.nodeId()).toBe(id);
    });
  });
}
