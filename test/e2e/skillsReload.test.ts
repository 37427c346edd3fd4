import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { walkAgents } from '../../src/agent/agent';
import { runToEnd } from '../../src/agent/turn';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';
import { OWNER } from '../../src/principal';
import { waitFor } from '../support/waitFor';

const operatorTools = (app: LangoApp) => {
  const operator = walkAgents(app.root()).find((a) => a.name === 'operator');
  return operator?.kind === 'llm' ? operator.tools.map((t) => t.name) : [];
};

describe('skills at runtime', () => {
  let dataDir: string;
  let app: LangoApp;
  beforeEach(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-skills-'));
    app = await createApp(resolveConfig({ dataDir, tools: { browser: { enabled: false } } }), {
      logger: createMemoryLogger(),
    });
  });
  afterEach(async () => {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('gives the operator a skill the librarian creates, without a restart, and runs it', async () => {
    expect(operatorTools(app)).not.toContain('skill_shout');
    const created = await runToEnd(app.runner, {
      principal: OWNER,
      sessionId: 'skills',
      text:
        'create_skill {"name":"shout","description":"Shouts a word.","type":"script",' +
        '"parameters":[{"name":"word","description":"the word","required":true}],' +
        '"body":"```sh\\necho \\"$SKILL_ARG_WORD\\" | tr a-z A-Z\\n```"}',
    });
    expect(created).toMatchObject({ status: 'completed', author: 'librarian' });
    // The skills folder is watched (debounced): the rebuilt tree shows the new tool.
    await waitFor(() => operatorTools(app).includes('skill_shout'), 20_000, 'skill_shout in the tree');

    const ran = await runToEnd(app.runner, {
      principal: OWNER,
      sessionId: 'skills',
      text: 'skill_shout {"word":"lango"}',
    });
    expect(ran).toMatchObject({ status: 'completed', author: 'operator' });
    expect(ran.text).toContain('LANGO');
    expect(app.families.find((f) => f.name === 'skills')?.tools).toEqual(['skill_shout']);
  });
});
