import fs from 'node:fs';
import path from 'node:path';
import { ApprovalRequired, type AnyTool } from '../../../src/agent/tool';
import type { ToolFamilyInstance } from '../../../src/toolset/family';
import { execFamily } from '../../../src/tools/operator/family';
import { byName, callTool, tempDir, toolContext, itWhenSandboxed } from './context';
import { familyDeps } from './deps';
import { namedCaller } from '../../../src/principal';
import { waitFor } from '../../support/waitFor';

/** The job's status once it is no longer running (the command ends on its own time). */
const ended = <T extends { status: string }>(status: () => Promise<T>) =>
  waitFor(
    async () => {
      const s = await status();
      return s.status !== 'running' && s;
    },
    20_000,
    'the job to end',
  );

describe('exec_bg, exec_status, exec_stop', () => {
  let dir: string;
  let cleanup: () => void;
  let deps: Awaited<ReturnType<typeof familyDeps>>;
  let family: ToolFamilyInstance;
  let tool: (name: string) => AnyTool;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    deps = await familyDeps(dir, { tools: { exec: { policy: 'ask', allow: ['echo', 'sleep', 'sh'] } } });
    family = await execFamily.create(deps);
    tool = (name) => byName(family.tools, name);
  });
  afterEach(async () => {
    await family.close?.();
    await deps.close();
    cleanup();
  });

  it('runs a command in the background and keeps its output after it exits', async () => {
    // The job goes on once the test has seen it running: it waits for a file the test writes then.
    fs.writeFileSync(
      path.join(dir, 'workspace', 'job.sh'),
      'echo first; while [ ! -e go ]; do sleep 0.05; done; echo second >&2; exit 4\n',
    );
    const started = await callTool(tool('exec_bg'), { command: 'sh job.sh' });
    expect(started).toMatchObject({ status: 'running' });
    expect(started.id).toMatch(/^job-[0-9a-f]{8}$/);
    const running = await callTool(tool('exec_status'), { id: started.id });
    expect(running.status).toBe('running');
    fs.writeFileSync(path.join(dir, 'workspace', 'go'), '');
    const finished = await ended(() => callTool(tool('exec_status'), { id: started.id }));
    expect(finished).toMatchObject({
      status: 'exited',
      exitCode: 4,
      output: 'first\nsecond\n',
      outputTruncated: false,
    });
    expect(fs.readFileSync(path.join(dir, 'exec-jobs', `${started.id}.log`), 'utf8')).toBe('first\nsecond\n');
    const listed = await callTool(tool('exec_status'), {});
    expect(listed.jobs.map((j: { id: string }) => j.id)).toEqual([started.id]);
  });

  it('stops a long-running job and its children', async () => {
    const started = await callTool(tool('exec_bg'), { command: 'sleep 30' });
    const stopped = await callTool(tool('exec_stop'), { id: started.id });
    expect(stopped).toMatchObject({ status: 'stopped', signal: 'SIGTERM' });
    expect(() => process.kill(started.pid, 0)).toThrow();
  });

  itWhenSandboxed('asks for approval before starting a command outside the allow-list under policy ask', async () => {
    await expect(callTool(tool('exec_bg'), { command: 'touch x' })).rejects.toBeInstanceOf(ApprovalRequired);
    expect(fs.readdirSync(path.join(dir, 'exec-jobs'))).toEqual([]);
    const started = await callTool(tool('exec_bg'), { command: 'touch x' }, toolContext({ approved: true }));
    await ended(() => callTool(tool('exec_status'), { id: started.id }));
    expect(fs.existsSync(path.join(dir, 'workspace', 'x'))).toBe(true);
  });

  it('masks secret values in kept output', async () => {
    deps.secrets.add('bg-secret-value-123');
    const started = await callTool(tool('exec_bg'), { command: 'echo bg-secret-value-123' });
    const finished = await ended(() => callTool(tool('exec_status'), { id: started.id }));
    expect(finished.output).toBe('[REDACTED]\n');
  });

  itWhenSandboxed(
    "keeps a caller's jobs from other callers: they can neither list, read nor stop them; the owner can",
    async () => {
      const alice = toolContext({ principal: namedCaller('bearer:alice') });
      const bob = toolContext({ principal: namedCaller('bearer:bob') });
      const started = await callTool(tool('exec_bg'), { command: 'sleep 30' }, alice);
      expect((await callTool(tool('exec_status'), {}, bob)).jobs).toEqual([]);
      await expect(callTool(tool('exec_status'), { id: started.id }, bob)).rejects.toThrow(/no background job/);
      await expect(callTool(tool('exec_stop'), { id: started.id }, bob)).rejects.toThrow(/no background job/);
      expect((await callTool(tool('exec_status'), { id: started.id }, alice)).status).toBe('running');
      expect((await callTool(tool('exec_status'), {})).jobs.map((j: { owner: string }) => j.owner)).toEqual([
        'bearer:alice',
      ]);
      expect(await callTool(tool('exec_stop'), { id: started.id })).toMatchObject({ status: 'stopped' });
    },
  );

  it('marks jobs that were running when the node restarted as lost, and names unknown ids', async () => {
    const started = await callTool(tool('exec_bg'), { command: 'sleep 30' });
    const restarted = await execFamily.create(deps);
    try {
      const status = await callTool(byName(restarted.tools, 'exec_status'), { id: started.id });
      expect(status.status).toBe('lost');
      await expect(callTool(byName(restarted.tools, 'exec_status'), { id: 'job-nope' })).rejects.toThrow(
        'no background job "job-nope"',
      );
    } finally {
      await restarted.close?.();
    }
  });
});
