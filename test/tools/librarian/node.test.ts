import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../../src/app';
import { runToEnd } from '../../../src/agent/turn';
import { resolveConfig } from '../../../src/config/load';
import { createMemoryLogger } from '../../../src/log/logger';
import { OWNER } from '../../../src/principal';

/**
 * The librarian and the chronicler inside a whole node on the offline model:
 * the orchestrator routes by tool name to the librarian, which runs the named
 * tool; memory is observed from the persisted session.
 */
describe('librarian and chronicler in a node on the offline model', () => {
  let dataDir: string;
  let app: LangoApp;

  beforeEach(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-librarian-node-'));
    const config = resolveConfig({
      server: { port: 0 },
      dataDir,
      tools: { browser: { enabled: false } },
      observationalMemory: { observeAfterTokens: 20 },
    });
    app = await createApp(config, { logger: createMemoryLogger() });
  });

  afterEach(async () => {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('saves knowledge, finds it by keyword and by meaning, and records an unanswered search as an inquiry', async () => {
    expect(app.families.filter((f) => ['librarian', 'chronicler'].includes(f.name))).toEqual([
      expect.objectContaining({ name: 'librarian', state: 'on' }),
      expect.objectContaining({ name: 'chronicler', state: 'on' }),
    ]);
    const ask = (text: string) => runToEnd(app.runner, { principal: OWNER, sessionId: 'ctx-lib', text });

    const saved = await ask(
      'save_knowledge {"kind": "fact", "content": "The release train leaves every second Tuesday.", "tags": ["release"]}',
    );
    expect(saved.author).toBe('librarian');
    expect(saved.text).toContain('Result of save_knowledge');

    const keyword = await ask('search_knowledge {"query": "release train"}');
    expect(keyword.text).toContain('The release train leaves every second Tuesday.');

    // Embedding is in the background: wait until the vector is there.
    for (let i = 0; i < 200; i++) {
      const { n } = app.db.prepare('SELECT count(*) AS n FROM rag_vectors').get() as { n: number };
      if (n > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const meaning = await ask('rag_retrieve {"query": "when does the relase trian leave"}');
    expect(meaning.text).toContain('The release train leaves every second Tuesday.');

    const gap = await ask('search_knowledge {"query": "who approves hotfixes"}');
    expect(gap.text).toContain('knowledge gap');
    const pending = await ask('librarian_pending_inquiries {}');
    expect(pending.text).toContain('who approves hotfixes');

    // The chronicler observed the session after those turns.
    for (let i = 0; i < 300; i++) {
      const { n } = app.db.prepare('SELECT count(*) AS n FROM memory_observations').get() as { n: number };
      if (n > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const observations = app.db.prepare('SELECT session_id, content FROM memory_observations').all() as {
      session_id: string;
      content: string;
    }[];
    expect(observations.length).toBeGreaterThan(0);
    expect(observations.every((o) => o.session_id === 'ctx-lib')).toBe(true);
  });
});
