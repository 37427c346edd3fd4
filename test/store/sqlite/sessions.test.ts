import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryLogger } from '../../../src/log/logger';
import { SecretRegistry } from '../../../src/log/redact';
import { OWNER } from '../../../src/principal';
import { toEvents } from '../../../src/store/sessionEvents';
import { openDatabase } from '../../../src/store/sqlite/database';
import { openSqliteStorage, type SqliteStorage } from '../../../src/store/sqlite/storage';

describe('the SQLite session store', () => {
  let dir: string;
  let file: string;
  let storage: SqliteStorage | undefined;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-sessions-'));
    file = path.join(dir, 'lango.db');
  });
  afterEach(async () => {
    await storage?.close();
    storage = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const open = (redact?: (text: string) => string) =>
    (storage = openSqliteStorage({ file, logger: createMemoryLogger(), clock: () => new Date(), redact }));

  it('stores message texts and tool-call arguments through the redact option, so a secret never lands in the file', async () => {
    const secrets = new SecretRegistry();
    secrets.add('hunter2-very-secret');
    const { sessions } = open((t) => secrets.redactText(t)).stores;
    const stored = await sessions.commitTurn(
      OWNER,
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
    expect((await sessions.messages(OWNER, 's'))[0].toolCalls?.[0].arguments).toBe(
      '{"name":"db","value":"[REDACTED]"}',
    );
    storage!.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(fs.readFileSync(file).includes('hunter2-very-secret')).toBe(false);
  });

  it('numbers a new session from 1 when the caller says it is new, and a second queued turn after it', async () => {
    const { sessions } = open().stores;
    const user = (content: string) => ({ role: 'user' as const, content, visible: true });
    const first = sessions.commitTurn(
      OWNER,
      'fresh',
      [user('a'), user('b')],
      { remoteState: {} },
      { newSession: true },
    );
    const second = sessions.commitTurn(OWNER, 'fresh', [user('c')], { remoteState: {} });
    expect((await first).map((m) => m.seq)).toEqual([1, 2]);
    expect((await second).map((m) => m.seq)).toEqual([3]);
    expect((await sessions.messages(OWNER, 'fresh')).map((m) => `${m.seq}:${m.content}`)).toEqual([
      '1:a',
      '2:b',
      '3:c',
    ]);
  });

  it('sees a turn in every read as soon as it is handed over, before its group commit', async () => {
    const { sessions } = open().stores;
    const committed = sessions.commitTurn(OWNER, 's', [{ role: 'user', content: 'hi', visible: true }], {
      remoteState: {},
    });
    expect((await sessions.messages(OWNER, 's')).map((m) => m.content)).toEqual(['hi']);
    await committed;
  });

  it('gives conversations kept before principals existed to the owner, keeping their numbering', async () => {
    const db = openDatabase(file);
    db.exec(`CREATE TABLE schema_migrations (
      store TEXT NOT NULL, step INTEGER NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (store, step));
      CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT '{}');
      CREATE TABLE session_messages (session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL, role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')), content TEXT NOT NULL,
        tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, author TEXT, visible INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL, PRIMARY KEY (session_id, seq));
      INSERT INTO schema_migrations VALUES ('sessions', 0, 'x'), ('sessions', 1, 'x');
      INSERT INTO sessions VALUES ('cli:old', 't', 't', '{"activeAgent":"operator","remoteState":{}}');
      INSERT INTO session_messages (session_id, seq, role, content, created_at) VALUES ('cli:old', 1, 'user', 'hello', 't');`);
    db.close();
    const { sessions } = open().stores;
    expect(await sessions.state(OWNER, 'cli:old')).toEqual({ activeAgent: 'operator', remoteState: {} });
    const next = await sessions.commitTurn(OWNER, 'cli:old', [{ role: 'user', content: 'again', visible: true }], {
      remoteState: {},
    });
    expect(next.map((m) => m.seq)).toEqual([2]);
    expect((await sessions.list(OWNER)).map((s) => [s.owner, s.id])).toEqual([['owner', 'cli:old']]);
  });
});

describe('events adapter: event author identity', () => {
  let storage: SqliteStorage;
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-events-'));
    storage = openSqliteStorage({
      file: path.join(dir, 'lango.db'),
      logger: createMemoryLogger(),
      clock: () => new Date(),
    });
  });
  afterEach(async () => {
    await storage.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const commit = (messages: Parameters<SqliteStorage['stores']['sessions']['commitTurn']>[2]) =>
    storage.stores.sessions.commitTurn(OWNER, 's', messages, { remoteState: {} });
  const events = async (root: string) => toEvents(await storage.stores.sessions.messages(OWNER, 's'), root);

  it('uses the stored author "lango-orchestrator" in multi-agent mode', async () => {
    await commit([{ role: 'assistant', content: 'hi', author: 'lango-orchestrator', visible: true }]);
    expect((await events('some-other-root'))[0]!.author).toBe('lango-orchestrator');
  });

  it('falls back to the configured root agent name for legacy assistant messages without an author, and "user" for user messages', async () => {
    await commit([
      { role: 'user', content: 'hello', visible: true },
      { role: 'assistant', content: 'hi', visible: true },
    ]);
    expect((await events('lango-orchestrator')).map((e) => e.author)).toEqual(['user', 'lango-orchestrator']);
    expect((await events('my-node')).map((e) => e.author)).toEqual(['user', 'my-node']);
  });

  it('uses "lango-agent" as the root name in single-agent mode', async () => {
    await commit([
      { role: 'assistant', content: 'hi', visible: true },
      { role: 'assistant', content: 'done', author: 'operator', visible: true },
    ]);
    expect((await events('lango-agent')).map((e) => e.author)).toEqual(['lango-agent', 'operator']);
  });
});
