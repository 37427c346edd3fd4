import { namedCaller, OWNER } from '../../../src/principal';
import type { ModelExchange, TaskTimeline } from '../../../src/store/timelines';
import { useStores, type StoresFactory } from './factory';

const alice = namedCaller('bearer:alice');

/** A finished turn started `minute` minutes after 10:00. */
function turn(id: string, minute: number, fields: Partial<TaskTimeline> = {}): TaskTimeline {
  return {
    id,
    sessionId: 'ctx-1',
    caller: 'owner',
    startedAt: new Date(Date.UTC(2026, 4, 1, 10, minute)).toISOString(),
    ms: 120,
    status: 'completed',
    agent: 'librarian',
    asked: `question ${id}`,
    steps: [
      { kind: 'agent', name: 'lango-orchestrator', agent: 'lango-orchestrator', atMs: 0, ms: 4 },
      {
        kind: 'tool',
        name: 'save_knowledge',
        agent: 'librarian',
        atMs: 5,
        ms: 2,
        args: '{"content":"x"}',
        result: 'ok',
      },
    ],
    ...fields,
  };
}

/**
 * What every {@link TimelineStore} must do. `replica`: the id the store
 * stamps on the turns it saves (a lone SQLite node: none).
 */
export function timelineStoreContract(factory: StoresFactory, options: { replica?: string } = {}): void {
  describe(`timeline store (${factory.name})`, () => {
    const opened = useStores(factory);
    const timelines = () => opened().stores.timelines;
    const stamped = (t: TaskTimeline) => (options.replica ? { ...t, replica: options.replica } : t);

    it('keeps finished turns with their steps across a restart, newest first, by task and by conversation', async () => {
      const first = turn('t1', 1, { taskId: 'task-a' });
      const second = turn('t2', 2, { taskId: 'task-a', status: 'input-required' });
      const other = turn('t3', 3, { taskId: 'task-b', sessionId: 'ctx-2' });
      const cli = turn('t4', 4, { sessionId: 'cli:1', ms: undefined, error: 'the turn was aborted' });
      await timelines().save([first, second]);
      await timelines().save([other, cli]);

      const reopened = (await opened().reopen()).timelines;
      expect(await reopened.list(OWNER, { limit: 10 })).toEqual([cli, other, second, first].map(stamped));
      expect(await reopened.list(OWNER, { taskIds: ['task-a'], limit: 10 })).toEqual([second, first].map(stamped));
      expect(await reopened.list(OWNER, { taskIds: ['task-a', 'task-b'], limit: 2 })).toEqual(
        [other, second].map(stamped),
      );
      expect(await reopened.list(OWNER, { taskIds: [], limit: 10 })).toEqual([]);
      expect(await reopened.list(OWNER, { sessionId: 'ctx-2', limit: 10 })).toEqual([stamped(other)]);
    });

    it('reads a turn saved a moment ago, and a second save of a turn replaces its row', async () => {
      const running = turn('t1', 1, { taskId: 'task-a', ms: undefined, status: undefined, steps: [] });
      void timelines().save([running]);
      expect(await timelines().list(OWNER, { limit: 10 })).toEqual([stamped(running)]);
      const ended = turn('t1', 1, { taskId: 'task-a' });
      await timelines().save([ended]);
      expect(await timelines().list(OWNER, { limit: 10 })).toEqual([stamped(ended)]);
    });

    it("keeps a turn's model exchanges, read with the turn by its id and left out of every listing", async () => {
      const exchange: ModelExchange = {
        step: 1,
        instruction: 'You are the librarian.',
        messages: [
          { role: 'user', content: 'remember my cat' },
          {
            role: 'assistant',
            content: '',
            author: 'librarian',
            toolCalls: [{ id: 'c1', name: 'save', arguments: '{}' }],
          },
          { role: 'tool', content: '{"ok":true}', name: 'save', toolCallId: 'c1' },
        ],
        omittedMessages: 2,
        tools: [{ name: 'save', description: 'Saves.', parameters: '{"type":"object"}' }],
        answer: { text: 'Saved.', toolCalls: [] },
        cut: true,
      };
      const inspected = turn('t1', 1, { taskId: 'task-a', exchanges: [exchange] });
      const { exchanges: _kept, ...listed } = inspected;
      await timelines().save([inspected, turn('t2', 2, { caller: alice.id })]);
      const reopened = (await opened().reopen()).timelines;
      expect(await reopened.turn(OWNER, 't1')).toEqual(stamped(inspected));
      expect(await reopened.list(OWNER, { taskIds: ['task-a'], limit: 10 })).toEqual([stamped(listed)]);
      // A turn without exchanges reads with none; a caller reads only its own turns; an unknown id is none.
      expect(await reopened.turn(alice, 't2')).toEqual(
        stamped({ ...turn('t2', 2, { caller: alice.id }), exchanges: [] }),
      );
      expect(await reopened.turn(alice, 't1')).toBeUndefined();
      expect(await reopened.turn(OWNER, 'nope')).toBeUndefined();
    });

    it("shows a caller its own turns only; the owner reads everyone's and may narrow to one caller", async () => {
      const owners = turn('t1', 1);
      const alices = turn('t2', 2, { caller: alice.id, sessionId: 'ctx-a' });
      await timelines().save([owners, alices]);
      expect(await timelines().list(alice, { limit: 10 })).toEqual([stamped(alices)]);
      // A caller asking for another's turns still reads only its own.
      expect(await timelines().list(alice, { caller: 'owner', limit: 10 })).toEqual([stamped(alices)]);
      expect(await timelines().list(OWNER, { limit: 10 })).toEqual([alices, owners].map(stamped));
      expect(await timelines().list(OWNER, { caller: 'owner', limit: 10 })).toEqual([stamped(owners)]);
    });
  });

  describe(`timeline store keeping three turns (${factory.name})`, () => {
    const opened = useStores(factory, { timelinesKept: 3 });
    const ids = async (stores = opened().stores) =>
      (await stores.timelines.list(OWNER, { limit: 10 })).map((t) => t.id);

    it('keeps the newest turns saved, a turn saved again in its place, across a restart', async () => {
      const timelines = opened().stores.timelines;
      await timelines.save([turn('t1', 1), turn('t2', 2)]);
      await timelines.save([turn('t3', 3), turn('t2', 2, { status: 'failed' })]);
      expect(await ids()).toEqual(['t3', 't2', 't1']);
      await timelines.save([turn('t4', 4), turn('t5', 5)]);
      expect(await ids()).toEqual(['t5', 't4', 't3']);
      expect(await ids(await opened().reopen())).toEqual(['t5', 't4', 't3']);
      // Many saved at once: the newest three stay, whatever went before.
      await opened().stores.timelines.save([6, 7, 8, 9, 10, 11].map((m) => turn(`t${m}`, m)));
      expect(await ids()).toEqual(['t11', 't10', 't9']);
    });
  });
}
