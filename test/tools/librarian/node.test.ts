import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../../src/app';
import { runToEnd } from '../../../src/agent/turn';
import { resolveConfig } from '../../../src/config/load';
import { createMemoryLogger } from '../../../src/log/logger';
import { OWNER } from '../../../src/principal';
import { waitFor } from '../../support/waitFor';

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

    // Embedding is in the background, after the tool answered: wait until the vector is stored.
    await waitFor(
      async () => (await app.stores.vectors.load('knowledge', 'local:hash-512-v2')).length > 0,
      20_000,
      'the knowledge vector',
    );
    const meaning = await ask('rag_retrieve {"query": "when does the relase trian leave"}');
    expect(meaning.text).toContain('The release train leaves every second Tuesday.');

    const gap = await ask('search_knowledge {"query": "who approves hotfixes"}');
    expect(gap.text).toContain('knowledge gap');
    const pending = await ask('librarian_pending_inquiries {}');
    expect(pending.text).toContain('who approves hotfixes');

    // The chronicler observes the session after those turns have answered.
    const observations = await waitFor(
      async () => {
        const found = await app.stores.memory.observations(OWNER, { limit: 50 });
        return found.length > 0 && found;
      },
      20_000,
      'observations of the session',
    );
    expect(observations.every((o) => o.sessionId === 'ctx-lib' && o.owner === 'owner')).toBe(true);
  });
});
