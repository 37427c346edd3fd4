import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runToEnd } from '../../src/agent/turn';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';
import { OWNER } from '../../src/principal';
import { waitFor } from '../support/waitFor';

/**
 * A workflow in a whole node (the real runner, the offline model): its steps
 * start at the specialists they name, a later step quotes an earlier one's
 * result, and the run's record says who answered each step.
 */
describe('a workflow across specialists in a whole node', () => {
  let dataDir: string;
  let app: LangoApp;
  beforeEach(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-workflow-'));
    app = await createApp(resolveConfig({ dataDir, tools: { browser: { enabled: false } } }), {
      logger: createMemoryLogger(),
    });
  });
  afterEach(async () => {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const call = async (text: string) => {
    const result = await runToEnd(app.runner, { principal: OWNER, sessionId: 'wf', text });
    expect(result.status).toBe('completed');
    if (!result.text.includes('{')) throw new Error(result.text);
    return JSON.parse(result.text.slice(result.text.indexOf('{'))) as Record<string, unknown>;
  };

  it('runs each step on its specialist, in dependency order, with results quoted downstream', async () => {
    const yaml = [
      'name: note-the-host',
      'steps:',
      '  - id: host',
      '    agent: operator',
      '    prompt: \'exec_shell {"command": "echo build-host-7"}\'',
      '  - id: remember',
      '    agent: librarian',
      '    depends_on: [host]',
      '    prompt: \'save_knowledge {"kind": "fact", "content": "the build ran: {{steps.host.result}}"}\'',
    ].join('\n');
    const started = await call(`workflow_run ${JSON.stringify({ yaml })}`);
    const runId = String(started.runId);

    type RunStatus = {
      status: string;
      steps: { stepId: string; agent: string; status: string; author: string; result: string }[];
    };
    const status = await waitFor(
      async () => {
        const run = (await call(`workflow_status ${JSON.stringify({ runId })}`)) as RunStatus;
        return run.status !== 'running' && run;
      },
      20_000,
      'the workflow run to finish',
    );

    expect(status.status).toBe('completed');
    expect(status.steps.map((s) => [s.stepId, s.agent, s.status, s.author])).toEqual([
      ['host', 'operator', 'completed', 'operator'],
      ['remember', 'librarian', 'completed', 'librarian'],
    ]);
    expect(status.steps[0].result).toContain('build-host-7');
    const found = await call('search_knowledge {"query": "build-host-7"}');
    expect(JSON.stringify(found)).toContain('build-host-7');
  });
});
