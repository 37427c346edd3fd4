import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GENERATION_EXTENSION } from '../../src/protocol/generation';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { OWNER } from '../../src/principal';
import { openSse, resultOf, rpc, type SseFrame } from '../support/sse';
import { startTestPostgres, type TestPostgres } from '../support/postgres';
import { skipWithoutPostgres } from '../support/prerequisites';
import { postgresTablesHolding, sqliteCellsHolding } from '../support/secretScan';
import { waitFor } from '../support/waitFor';

/**
 * Issue 37: one redaction point for stored text. A secret is stored the way
 * a user does it (a message naming `secrets_store` with the value), then
 * turns echo it through every tool family the node runs here; afterwards no
 * table of the database (the real SQLite file; a real PostgreSQL server)
 * and no line the node logged holds the value. The offline model runs each
 * tool a message names with its JSON arguments (README, "The offline model").
 * The navigator and payments are off here (they need Chromium and a chain);
 * neither keeps text of its own beyond the turn's, and the ledger's memo and
 * error are in `test/store/redacted.test.ts`.
 */

const SECRET = 'sk-live-7QfZ2wR9xK4mB8vN1pL6';
/** Fifteen turns, a background job and a workflow run on a real node: bounded, but not by a unit test's 30 s. */
const WHOLE_NODE_MS = 120_000;

/** A turn per tool family, each carrying the secret into the tool's arguments (and most into its result). */
const TURNS = [
  // vault (crypto)
  `crypto_encrypt {"text":"token ${SECRET}"}`,
  `crypto_hash {"text":"${SECRET}"}`,
  // operator (fs, exec)
  `fs_write {"path":"notes/key.txt","content":"the key is ${SECRET}"}`,
  `fs_read {"path":"notes/key.txt"}`,
  `exec_shell {"command":"echo ${SECRET}"}`,
  `exec_bg {"command":"echo ${SECRET}"}`,
  // librarian (knowledge, learnings, graph, inquiries)
  `save_knowledge {"kind":"fact","content":"the deploy key is ${SECRET}","source":"ops ${SECRET}","tags":["key"]}`,
  `save_learning {"errorPattern":"401 with ${SECRET}","diagnosis":"rotated ${SECRET}","fix":"use ${SECRET} again"}`,
  `graph_add {"triples":[{"subject":"deploy","predicate":"uses","object":"${SECRET}"}]}`,
  `search_learnings {"query":"zebra ${SECRET}"}`,
  `create_skill {"name":"rotate_key","description":"rotates ${SECRET}","type":"prompt","body":"Rotate ${SECRET} now."}`,
  // chronicler
  `observe_event {"content":"the user shared ${SECRET}"}`,
  // automator (cron, background, workflows)
  `cron_add {"name":"rotate","schedule":"every 1h","prompt":"check ${SECRET}"}`,
  `bg_submit {"prompt":"remember ${SECRET}","label":"job ${SECRET}"}`,
  `workflow_run {"yaml":"name: leak\\nsteps:\\n  - id: a\\n    prompt: say ${SECRET}\\n"}`,
];

/** Streams one message to its end (with generations, so its events are kept as a resuming client's are). */
async function streamTurn(url: string, text: string): Promise<SseFrame[]> {
  const message = { messageId: `m-${Math.random().toString(36).slice(2)}`, role: 'ROLE_USER', parts: [{ text }] };
  const stream = await openSse(`${url}/`, rpc('SendStreamingMessage', { message }), {
    'A2A-Extensions': GENERATION_EXTENSION,
  });
  const frames: SseFrame[] = [];
  for (let frame = await stream.next(); frame; frame = await stream.next()) frames.push(frame);
  return frames;
}

/** The final state a stream's frames leave their task in. */
const finalState = (frames: SseFrame[]) => {
  const last = resultOf(frames.at(-1)!);
  return last.statusUpdate?.status?.state ?? last.task?.status?.state;
};

/** A node on the offline model over `storage`, its turns echoing the secret; what it wrote is left to scan. */
async function runSecretTurns(config: LangoConfigInput, logger: MemoryLogger): Promise<LangoApp> {
  const app = await createApp(
    resolveConfig({
      server: { port: 0 },
      security: { masterKey: 'c'.repeat(64) },
      tools: { browser: { enabled: false }, exec: { policy: 'allow' } },
      ...config,
    }),
    { logger },
  );
  try {
    const url = await app.listen();
    // Stored the way a user stores one: the value is in the message, and in the task's first event, before the tool runs.
    const stored = await streamTurn(url, `secrets_store {"name":"deploy_key","value":"${SECRET}"}`);
    expect(finalState(stored)).toBe('TASK_STATE_COMPLETED');
    for (const text of TURNS) {
      const frames = await streamTurn(url, text);
      expect({ text, state: finalState(frames) }).toEqual({ text, state: expect.stringMatching(/COMPLETED|INPUT/) });
    }
    // The background job and the workflow run turns of their own: the scan waits for them to end.
    await waitFor(
      async () =>
        (await app.stores.background.list(OWNER, { limit: 10 })).every((job) => job.finishedAt !== null) &&
        (await app.stores.workflows.listRuns(OWNER, 10)).every((run) => run.finishedAt !== null),
      20_000,
      'the background job and the workflow run to end',
    );
    return app;
  } catch (err) {
    await app.close();
    throw err;
  }
}

describe('a secret echoed through every tool family is stored nowhere in clear', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-secrets-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    'in no table of the SQLite file, and in no line the node logged',
    async () => {
      const dataDir = tempDir();
      const logger = createMemoryLogger();
      const app = await runSecretTurns({ dataDir }, logger);
      await app.close();
      const file = path.join(dataDir, 'lango.db');
      // What the turns wrote is there, masked: the scan would find the value where it was written.
      expect(sqliteCellsHolding(file, '[REDACTED]')).toEqual(
        expect.arrayContaining([
          'session_messages.content',
          'task_timelines.asked',
          'a2a_tasks.history',
          'a2a_task_events.event',
          'knowledge.content',
          'cron_jobs.prompt',
          'graph_triples.object',
          'learnings.fix',
          'librarian_inquiries.question',
          'memory_observations.content',
          'bg_jobs.prompt',
          'workflow_runs.yaml',
        ]),
      );
      expect(sqliteCellsHolding(file, SECRET)).toEqual([]);
      expect(JSON.stringify(logger.records)).not.toContain(SECRET);
      expect(logger.records.length).toBeGreaterThan(10);
    },
    WHOLE_NODE_MS,
  );

  if (skipWithoutPostgres('a secret echoed through every tool family, on PostgreSQL')) return;
  describe('on PostgreSQL', () => {
    let server: TestPostgres;
    beforeAll(async () => {
      server = await startTestPostgres();
    }, 60_000);
    afterAll(() => server?.stop());

    it(
      'in no table of any schema of the database, and in no line the node logged',
      async () => {
        const url = await server.createDatabase();
        const logger = createMemoryLogger();
        const app = await runSecretTurns({ dataDir: tempDir(), storage: { url } }, logger);
        await app.close();
        expect(await postgresTablesHolding(url, '[REDACTED]')).toEqual(
          expect.arrayContaining(['public.session_messages', 'public.task_timelines', 'public.a2a_task_events']),
        );
        expect(await postgresTablesHolding(url, SECRET)).toEqual([]);
        expect(JSON.stringify(logger.records)).not.toContain(SECRET);
      },
      WHOLE_NODE_MS,
    );
  });
});
