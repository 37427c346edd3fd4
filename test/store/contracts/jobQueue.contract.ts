import { namedCaller } from '../../../src/principal';
import type { CronOccurrence, JobQueue } from '../../../src/store/jobQueue';
import { waitFor } from '../../support/waitFor';
import { useStores, type StoresFactory } from './factory';

const alice = namedCaller('bearer:alice');
const iso = (ms: number) => new Date(ms).toISOString();

/** Everything one take hands out (the claim records it and succeeds). */
async function takeAllCron(queue: JobQueue, limit = 10): Promise<CronOccurrence[]> {
  const taken: CronOccurrence[] = [];
  await queue.takeCron(limit, async (occurrence) => void taken.push(occurrence));
  return taken;
}
async function takeAllBackground(queue: JobQueue, limit = 10): Promise<string[]> {
  const taken: string[] = [];
  await queue.takeBackground(limit, async (id) => void taken.push(id));
  return taken;
}

/**
 * What the job queue must do on either database (`Stores.jobQueue`): the
 * one path of the cron scheduler and the background queue. Times are real:
 * entries come due a few hundred milliseconds out, and the queue must wake
 * its takers then, not before and not by being asked.
 */
export function jobQueueContract(factory: StoresFactory): void {
  describe(`job queue (${factory.name})`, () => {
    const opened = useStores(factory);
    const queue = () => opened().stores.jobQueue;

    it('hands a due cron fire time to one take, once per (job, time), and keeps a later one waiting', async () => {
      const due = { owner: alice.id, name: 'daily', scheduledFor: iso(Date.now() - 1_000) };
      const later = { owner: alice.id, name: 'daily', scheduledFor: iso(Date.now() + 60_000) };
      await queue().scheduleCron(due);
      await queue().scheduleCron(due);
      await queue().scheduleCron(later);
      expect(await takeAllCron(queue())).toEqual([due]);
      expect(await takeAllCron(queue())).toEqual([]);
    });

    it('claims a fire time once: the job moves on and its next fire time is queued with it', async () => {
      const { cron } = opened().stores;
      const firstAt = iso(Date.now() - 500);
      const nextAt = iso(Date.now() + 400);
      await cron.insert(alice, {
        name: 'tick',
        kind: 'every',
        schedule: 'every 1s',
        prompt: 'tick',
        status: 'active',
        anchorAt: iso(Date.now() - 1_500),
        nextRunAt: firstAt,
        lastRunAt: null,
        createdAt: iso(Date.now() - 1_500),
      });
      let woken = 0;
      const stop = queue().onDue('cron', () => (woken += 1));
      try {
        const first = { owner: alice.id, name: 'tick', scheduledFor: firstAt };
        const lastRunAt = iso(Date.now());
        expect(await queue().claimCron(first, { status: 'active', nextRunAt: nextAt, lastRunAt })).toBe(true);
        // A second replica (or a second take) with the same fire time finds the job moved on.
        expect(await queue().claimCron(first, { status: 'active', nextRunAt: nextAt, lastRunAt })).toBe(false);
        expect(await cron.get(alice, 'tick')).toMatchObject({ nextRunAt: nextAt, lastRunAt });
        // The wake-up is the queue's own timer for the fire time it queued (400 ms on); the limit is only a bound
        // for a machine too busy to run it, never the thing waited for.
        await waitFor(() => woken > 0, 60_000, 'the queue to wake its taker when the next fire time comes');
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(nextAt) - 50);
        const following = { owner: alice.id, name: 'tick', scheduledFor: nextAt };
        expect(await takeAllCron(queue())).toEqual([following]);
        // The last fire time of a schedule queues none after it.
        expect(await queue().claimCron(following, { status: 'done', nextRunAt: null, lastRunAt })).toBe(true);
        expect(await cron.get(alice, 'tick')).toMatchObject({ status: 'done', nextRunAt: null });
        // The claim that ended the schedule is where a next fire time would have been queued: none was.
        expect(await takeAllCron(queue())).toEqual([]);
      } finally {
        stop();
      }
    });

    it('wakes its takers when a background job comes due, not before, and hands each job out once', async () => {
      let woken = 0;
      let firstWokenAt = 0;
      const stop = queue().onDue('background', () => {
        woken += 1;
        firstWokenAt ||= Date.now();
      });
      try {
        const queuedAt = Date.now();
        await queue().enqueueBackground('bg-later', 700);
        await queue().enqueueBackground('bg-later', 700);
        expect(await takeAllBackground(queue())).toEqual([]);
        // Woken by the queue's own timer (700 ms on); the limit only bounds a machine too busy to run it.
        await waitFor(() => woken > 0, 60_000, 'the wake-up when it is due');
        // Not before: the first wake-up came once the job was due (a later one only ever comes later).
        expect(firstWokenAt - queuedAt).toBeGreaterThanOrEqual(650);
        expect(await takeAllBackground(queue())).toEqual(['bg-later']);
        expect(await takeAllBackground(queue())).toEqual([]);
      } finally {
        stop();
      }
    });

    it('hands out the oldest waiting jobs first, up to the limit (in any order within one take)', async () => {
      for (const id of ['bg-a', 'bg-b', 'bg-c']) await queue().enqueueBackground(id);
      expect((await takeAllBackground(queue(), 2)).sort()).toEqual(['bg-a', 'bg-b']);
      expect(await takeAllBackground(queue(), 2)).toEqual(['bg-c']);
    });

    it('puts back a job whose claim threw and hands it out again shortly after', async () => {
      await queue().enqueueBackground('bg-retry');
      const refused = await queue().takeBackground(1, async () => {
        throw new Error('the row could not be claimed');
      });
      expect(refused).toBe(1);
      expect(await takeAllBackground(queue())).toEqual([]);
      const taken = await waitFor(
        async () => {
          const ids = await takeAllBackground(queue());
          return ids.length > 0 && ids;
        },
        20_000,
        'the job handed out again',
      );
      expect(taken).toEqual(['bg-retry']);
    });

    it('keeps what waits across a restart', async () => {
      const due = { owner: alice.id, name: 'kept', scheduledFor: iso(Date.now() - 1_000) };
      await queue().scheduleCron(due);
      await queue().enqueueBackground('bg-kept');
      const stores = await opened().reopen();
      expect(await takeAllCron(stores.jobQueue)).toEqual([due]);
      expect(await takeAllBackground(stores.jobQueue)).toEqual(['bg-kept']);
    });
  });
}
