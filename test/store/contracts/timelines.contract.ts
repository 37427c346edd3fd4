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
    let now = Date.UTC(2026, 4, 1, 12);
    const opened = useStores(factory, { timelinesKept: 3, clock: () => new Date(now) });
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

    it('reads each turn with the system prompt it was sent, a prompt shared by many turns kept while a kept turn names it', async () => {
      const shared = `You are the orchestrator. ${'Route each request to the specialist that owns it. '.repeat(40)}`;
      const asked = (id: string, minute: number, instruction: string) =>
        turn(id, minute, {
          exchanges: [{ step: 1, instruction, messages: [], tools: [], answer: { text: 'Hello.', toolCalls: [] } }],
        });
      const instructionOf = async (id: string, stores = opened().stores) =>
        (await stores.timelines.turn(OWNER, id))?.exchanges?.[0]?.instruction;
      await opened().stores.timelines.save([asked('t1', 1, shared)]);
      await opened().stores.timelines.save([asked('t2', 2, shared), asked('t3', 3, `${shared} Context: today.`)]);
      await opened().stores.timelines.save([asked('t4', 4, shared)]);
      const reopened = await opened().reopen();
      expect(await instructionOf('t4', reopened)).toBe(shared);
      expect(await instructionOf('t3', reopened)).toBe(`${shared} Context: today.`);
      expect(await instructionOf('t2', reopened)).toBe(shared);

      // Long after the prompt was last written, a prune runs with the next write: t4 still names it, so it stays.
      now += 60 * 60_000;
      await reopened.timelines.save([asked('t5', 5, 'A short prompt, kept in the row.')]);
      await reopened.timelines.save([turn('t6', 6)]);
      expect(await ids(reopened)).toEqual(['t6', 't5', 't4']);
      expect(await instructionOf('t4', reopened)).toBe(shared);
      expect(await instructionOf('t5', reopened)).toBe('A short prompt, kept in the row.');
    });
  });
}
