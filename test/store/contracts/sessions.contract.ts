import { namedCaller, OWNER } from '../../../src/principal';
import type { NewSessionMessage } from '../../../src/store/sessions';
import { useStores, type StoresFactory } from './factory';

const user = (content: string): NewSessionMessage => ({ role: 'user', content, visible: true });
const empty = { remoteState: {} };

/** What every {@link SessionStore} must do, whatever database is behind it. */
export function sessionStoreContract(factory: StoresFactory): void {
  describe(`session store (${factory.name})`, () => {
    const clock = () => new Date('2026-01-02T03:04:05.000Z');
    const opened = useStores(factory, { clock });
    const sessions = () => opened().stores.sessions;

    it('keeps messages, tool calls, authors and state across a restart', async () => {
      await sessions().commitTurn(
        OWNER,
        'a2a:ctx-1',
        [
          user('list files'),
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'c1', name: 'fs_list', arguments: '{}' }],
            author: 'operator',
            visible: false,
          },
          {
            role: 'tool',
            content: '["a.txt"]',
            toolCallId: 'c1',
            toolName: 'fs_list',
            author: 'operator',
            visible: false,
          },
          { role: 'assistant', content: 'There is a.txt.', author: 'operator', visible: true },
        ],
        { activeAgent: 'peer', remoteState: { peer: { taskId: 't-9' } } },
      );
      const reopened = (await opened().reopen()).sessions;
      const messages = await reopened.messages(OWNER, 'a2a:ctx-1');
      expect(messages.map((m) => [m.seq, m.role, m.author])).toEqual([
        [1, 'user', undefined],
        [2, 'assistant', 'operator'],
        [3, 'tool', 'operator'],
        [4, 'assistant', 'operator'],
      ]);
      expect(messages[1]!.toolCalls).toEqual([{ id: 'c1', name: 'fs_list', arguments: '{}' }]);
      expect(messages[2]).toMatchObject({
        toolCallId: 'c1',
        toolName: 'fs_list',
        createdAt: '2026-01-02T03:04:05.000Z',
      });
      expect(await reopened.state(OWNER, 'a2a:ctx-1')).toEqual({
        activeAgent: 'peer',
        remoteState: { peer: { taskId: 't-9' } },
      });
      expect(await reopened.list(OWNER)).toEqual([
        { owner: 'owner', id: 'a2a:ctx-1', updatedAt: '2026-01-02T03:04:05.000Z', firstMessage: 'list files' },
      ]);
    });

    it('lists each conversation with the start of its first user message, whatever came after', async () => {
      const long = `deploy ${'x'.repeat(300)}`;
      await sessions().commitTurn(OWNER, 'a', [user(long), { role: 'assistant', content: 'ok', visible: true }], empty);
      await sessions().commitTurn(OWNER, 'a', [user('and then?')], empty);
      await sessions().commitTurn(OWNER, 'b', [{ role: 'assistant', content: 'hello', visible: true }], empty);
      const listed = await sessions().list(OWNER);
      expect(listed.find((s) => s.id === 'a')?.firstMessage).toBe(long.slice(0, 120));
      expect(listed.find((s) => s.id === 'b')).not.toHaveProperty('firstMessage');
    });

    it("renames a caller's conversation, keeping its messages and place, across a restart; an empty title unnames it", async () => {
      const alice = namedCaller('bearer:alice');
      await sessions().commitTurn(OWNER, 'a', [user('plan a picnic')], empty);
      await sessions().commitTurn(alice, 'a', [user('alice plans')], empty);
      await sessions().commitTurn(OWNER, 'b', [user('later one')], empty);
      const before = await sessions().list(OWNER);
      expect(await sessions().rename(OWNER, 'a', `  Picnic ${'x'.repeat(300)}  `)).toBe(true);
      expect(await sessions().rename(OWNER, 'nobody', 'x')).toBe(false);
      const reopened = (await opened().reopen()).sessions;
      const listed = await reopened.list(OWNER);
      // Same order, same times: a rename is not a turn.
      expect(listed.map((s) => [s.owner, s.id, s.updatedAt])).toEqual(before.map((s) => [s.owner, s.id, s.updatedAt]));
      const named = listed.find((s) => s.owner === 'owner' && s.id === 'a')!;
      expect(named.title).toBe(`Picnic ${'x'.repeat(193)}`);
      expect(named.firstMessage).toBe('plan a picnic');
      // Alice's conversation of the same id keeps no name: a rename is the principal's own.
      expect(listed.find((s) => s.owner === alice.id)).not.toHaveProperty('title');
      expect((await reopened.messages(OWNER, 'a')).map((m) => m.content)).toEqual(['plan a picnic']);
      expect(await reopened.rename(OWNER, 'a', '   ')).toBe(true);
      expect((await reopened.list(OWNER)).find((s) => s.owner === 'owner' && s.id === 'a')).not.toHaveProperty('title');
    });

    it('continues the numbering over turns and filters what the user saw, keeping the last N', async () => {
      await sessions().commitTurn(
        OWNER,
        's',
        [user('one'), { role: 'assistant', content: 'r1', author: 'x', visible: true }],
        empty,
      );
      const second = await sessions().commitTurn(
        OWNER,
        's',
        [
          user('two'),
          { role: 'user', content: 'note', author: 'runtime', visible: false },
          { role: 'assistant', content: 'r2', visible: true },
        ],
        empty,
      );
      expect(second.map((m) => m.seq)).toEqual([3, 4, 5]);
      expect((await sessions().messages(OWNER, 's')).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
      const last = await sessions().messages(OWNER, 's', { visibleOnly: true, limit: 3 });
      expect(last.map((m) => m.content)).toEqual(['r1', 'two', 'r2']);
    });

    it('numbers turns of one session committed at once without a clash', async () => {
      const turns = await Promise.all(
        ['a', 'b', 'c'].map((text) => sessions().commitTurn(OWNER, 'busy', [user(text), user(`${text}2`)], empty)),
      );
      expect(
        turns
          .flat()
          .map((m) => m.seq)
          .sort((x, y) => x - y),
      ).toEqual([1, 2, 3, 4, 5, 6]);
      expect((await sessions().messages(OWNER, 'busy')).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    });

    it('numbers the turns of several sessions committed at once in the order they were handed over', async () => {
      await sessions().commitTurn(OWNER, 'y', [user('y0')], empty);
      const turns = await Promise.all([
        sessions().commitTurn(OWNER, 'y', [user('y1'), user('y2')], empty),
        sessions().commitTurn(OWNER, 'x', [user('x1')], empty),
        sessions().commitTurn(OWNER, 'y', [], empty),
        sessions().commitTurn(OWNER, 'y', [user('y3')], { remoteState: { peer: { contextId: 'c' } } }),
        sessions().commitTurn(OWNER, 'x', [user('x2'), user('x3')], empty),
      ]);
      expect(turns.map((turn) => turn.map((m) => `${m.content}@${m.seq}`))).toEqual([
        ['y1@2', 'y2@3'],
        ['x1@1'],
        [],
        ['y3@4'],
        ['x2@2', 'x3@3'],
      ]);
      expect((await sessions().messages(OWNER, 'y')).map((m) => `${m.content}@${m.seq}`)).toEqual([
        'y0@1',
        'y1@2',
        'y2@3',
        'y3@4',
      ]);
      expect((await sessions().messages(OWNER, 'x')).map((m) => m.content)).toEqual(['x1', 'x2', 'x3']);
      expect((await sessions().state(OWNER, 'y')).remoteState).toEqual({ peer: { contextId: 'c' } });
    });

    it('numbers a group of more sessions and messages than one bound table holds, each session in order', async () => {
      const many = Array.from({ length: 150 }, (_, i) => `s${i}`);
      const turns = await Promise.all([
        ...many.map((id) => sessions().commitTurn(OWNER, id, [user(`${id}a`), user(`${id}b`)], empty)),
        sessions().commitTurn(OWNER, 's7', [user('s7c')], empty),
      ]);
      expect(turns[7].map((m) => m.seq)).toEqual([1, 2]);
      expect(turns[150].map((m) => `${m.content}@${m.seq}`)).toEqual(['s7c@3']);
      expect(turns.flat()).toHaveLength(301);
      expect((await sessions().messages(OWNER, 's149')).map((m) => `${m.content}@${m.seq}`)).toEqual([
        's149a@1',
        's149b@2',
      ]);
      expect((await sessions().messages(OWNER, 's7')).map((m) => m.content)).toEqual(['s7a', 's7b', 's7c']);
    });

    it('gives an unknown session an empty state and forgets a deleted session', async () => {
      expect(await sessions().state(OWNER, 'nobody')).toEqual({ remoteState: {} });
      await sessions().commitTurn(OWNER, 's', [user('hi')], empty);
      expect(await sessions().delete(OWNER, 's')).toBe(true);
      expect(await sessions().delete(OWNER, 's')).toBe(false);
      expect(await sessions().messages(OWNER, 's')).toEqual([]);
      expect(await sessions().list(OWNER)).toEqual([]);
    });

    it('keys conversations by principal: the same id from two callers is two conversations', async () => {
      const alice = namedCaller('bearer:alice');
      const bob = namedCaller('bearer:bob');
      const pending = {
        remoteState: {},
        activeAgent: 'operator',
        pendingApproval: {
          agentName: 'operator',
          call: { id: 'c1', name: 'exec_shell', arguments: '{"command":"rm -rf build"}' },
          question: 'May I run rm -rf build?',
        },
      };
      await sessions().commitTurn(alice, 'ctx-1', [user('alice asks')], pending);
      await sessions().commitTurn(bob, 'ctx-1', [user('bob asks')], empty);
      expect((await sessions().messages(alice, 'ctx-1')).map((m) => [m.seq, m.content])).toEqual([[1, 'alice asks']]);
      expect((await sessions().messages(bob, 'ctx-1')).map((m) => [m.seq, m.content])).toEqual([[1, 'bob asks']]);
      // Alice's pending approval lives with her conversation: Bob's same contextId cannot answer it.
      expect((await sessions().state(alice, 'ctx-1')).pendingApproval?.question).toBe('May I run rm -rf build?');
      expect((await sessions().state(bob, 'ctx-1')).pendingApproval).toBeUndefined();
      expect(await sessions().delete(bob, 'ctx-1')).toBe(true);
      expect(await sessions().messages(alice, 'ctx-1')).toHaveLength(1);
      // A listing shows a caller its own; the owner sees everyone's.
      expect((await sessions().list(alice)).map((s) => [s.owner, s.id])).toEqual([['bearer:alice', 'ctx-1']]);
      expect((await sessions().list(bob)).map((s) => s.id)).toEqual([]);
      expect((await sessions().list(OWNER)).map((s) => [s.owner, s.id])).toEqual([['bearer:alice', 'ctx-1']]);
      // The owner's own ctx-1 is a third conversation.
      expect(await sessions().messages(OWNER, 'ctx-1')).toEqual([]);
    });
  });
}
