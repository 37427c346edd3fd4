import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type SqliteDatabase } from '../../src/store/database';
import { createSessionStore, type SessionStore } from '../../src/store/sessions';
import { toEvents } from '../../src/store/sessionEvents';
import { createMemoryLogger } from '../../src/log/logger';
import { SecretRegistry } from '../../src/log/redact';

describe('session store', () => {
  let dir: string;
  let file: string;
  let db: SqliteDatabase;
  let sessions: SessionStore;
  const clock = () => new Date('2026-01-02T03:04:05.000Z');
  const open = () => {
    db = openDatabase(file);
    sessions = createSessionStore({ db, logger: createMemoryLogger(), clock });
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-sessions-'));
    file = path.join(dir, 'lango.db');
    open();
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stores message texts and tool-call arguments through the redact option, so a secret never lands in the file', () => {
    const secrets = new SecretRegistry();
    secrets.add('hunter2-very-secret');
    const masked = createSessionStore({
      db,
      logger: createMemoryLogger(),
      clock,
      redact: (t) => secrets.redactText(t),
    });
    const stored = masked.commitTurn(
      's',
      [
        {
          role: 'assistant',
          content: 'storing hunter2-very-secret',
          toolCalls: [{ id: 'c1', name: 'secrets_store', arguments: '{"name":"db","value":"hunter2-very-secret"}' }],
          author: 'vault',
          visible: false,
        },
      ],
      { remoteState: {} },
    );
    expect(stored[0].content).toBe('storing [REDACTED]');
    expect(masked.messages('s')[0].toolCalls?.[0].arguments).toBe('{"name":"db","value":"[REDACTED]"}');
    db.pragma('wal_checkpoint(TRUNCATE)');
    expect(fs.readFileSync(file).includes('hunter2-very-secret')).toBe(false);
  });

  it('keeps messages, tool calls, authors and state across closing and reopening the database file', () => {
    sessions.commitTurn(
      'a2a:ctx-1',
      [
        { role: 'user', content: 'list files', visible: true },
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
    sessions.flush();
    db.close();
    open();

    const messages = sessions.messages('a2a:ctx-1');
    expect(messages.map((m) => [m.seq, m.role, m.author])).toEqual([
      [1, 'user', undefined],
      [2, 'assistant', 'operator'],
      [3, 'tool', 'operator'],
      [4, 'assistant', 'operator'],
    ]);
    expect(messages[1]!.toolCalls).toEqual([{ id: 'c1', name: 'fs_list', arguments: '{}' }]);
    expect(messages[2]).toMatchObject({ toolCallId: 'c1', toolName: 'fs_list', createdAt: '2026-01-02T03:04:05.000Z' });
    expect(sessions.state('a2a:ctx-1')).toEqual({ activeAgent: 'peer', remoteState: { peer: { taskId: 't-9' } } });
    expect(sessions.list()).toEqual([{ id: 'a2a:ctx-1', updatedAt: '2026-01-02T03:04:05.000Z' }]);
  });

  it('continues the sequence over turns and filters what the user saw, keeping the last N', () => {
    sessions.commitTurn(
      's',
      [
        { role: 'user', content: 'one', visible: true },
        { role: 'assistant', content: 'r1', author: 'x', visible: true },
      ],
      { remoteState: {} },
    );
    sessions.commitTurn(
      's',
      [
        { role: 'user', content: 'two', visible: true },
        { role: 'user', content: 'note', author: 'runtime', visible: false },
        { role: 'assistant', content: 'r2', visible: true },
      ],
      { remoteState: {} },
    );
    expect(sessions.messages('s').map((m) => m.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(sessions.messages('s', { visibleOnly: true, limit: 3 }).map((m) => m.content)).toEqual(['r1', 'two', 'r2']);
  });

  it("numbers a new session's first turn without a query, after any turn of it that committed first", async () => {
    const hi = (content: string) => [{ role: 'user' as const, content, visible: true }];
    const release = sessions.reserveNewSession('fresh');
    // Another caller learned the contextId from a stream and its turn ended first.
    expect(sessions.commitTurn('fresh', hi('second caller'), { remoteState: {} }).map((m) => m.seq)).toEqual([1]);
    await new Promise((resolve) => setImmediate(resolve)); // that turn is on disk
    const first = sessions.commitTurn('fresh', hi('first caller'), { remoteState: {} }, { newSession: true });
    release();
    expect(first.map((m) => m.seq)).toEqual([2]);
    expect(sessions.messages('fresh').map((m) => [m.seq, m.content])).toEqual([
      [1, 'second caller'],
      [2, 'first caller'],
    ]);
    // Without a reservation the flag changes nothing: the numbering comes from the table.
    expect(sessions.commitTurn('fresh', hi('later'), { remoteState: {} }, { newSession: true })[0]!.seq).toBe(3);
  });

  it('gives an unknown session an empty state and forgets a deleted session', () => {
    expect(sessions.state('nobody')).toEqual({ remoteState: {} });
    sessions.commitTurn('s', [{ role: 'user', content: 'hi', visible: true }], { remoteState: {} });
    sessions.delete('s');
    expect(sessions.messages('s')).toEqual([]);
    expect(sessions.list()).toEqual([]);
  });
});

describe('events adapter: event author identity', () => {
  let dir: string;
  let db: SqliteDatabase;
  let sessions: SessionStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-events-'));
    db = openDatabase(path.join(dir, 'lango.db'));
    sessions = createSessionStore({ db, logger: createMemoryLogger(), clock: () => new Date() });
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('uses the stored author "lango-orchestrator" in multi-agent mode', () => {
    sessions.commitTurn('s', [{ role: 'assistant', content: 'hi', author: 'lango-orchestrator', visible: true }], {
      remoteState: {},
    });
    expect(toEvents(sessions.messages('s'), 'some-other-root')[0]!.author).toBe('lango-orchestrator');
  });

  it('falls back to the configured root agent name for legacy assistant messages without an author, and "user" for user messages', () => {
    sessions.commitTurn(
      's',
      [
        { role: 'user', content: 'hello', visible: true },
        { role: 'assistant', content: 'hi', visible: true },
      ],
      { remoteState: {} },
    );
    expect(toEvents(sessions.messages('s'), 'lango-orchestrator').map((e) => e.author)).toEqual([
      'user',
      'lango-orchestrator',
    ]);
    expect(toEvents(sessions.messages('s'), 'my-node').map((e) => e.author)).toEqual(['user', 'my-node']);
  });

  it('uses "lango-agent" as the root name in single-agent mode', () => {
    sessions.commitTurn(
      's',
      [
        { role: 'assistant', content: 'hi', visible: true },
        { role: 'assistant', content: 'done', author: 'operator', visible: true },
      ],
      { remoteState: {} },
    );
    expect(toEvents(sessions.messages('s'), 'lango-agent').map((e) => e.author)).toEqual(['lango-agent', 'operator']);
  });
});
