import fs from 'node:fs';
import path from 'node:path';
import { ApprovalRequired, type AnyTool } from '../../../src/agent/tool';
import type { ToolFamilyInstance } from '../../../src/tools/family';
import { execFamily } from '../../../src/tools/operator/family';
import { byName, callTool, tempDir, toolContext } from './context';
import { familyDeps } from './deps';

async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

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
    fs.writeFileSync(path.join(dir, 'workspace', 'job.sh'), 'echo first; sleep 0.3; echo second >&2; exit 4\n');
    const started = await callTool(tool('exec_bg'), { command: 'sh job.sh' });
    expect(started).toMatchObject({ status: 'running' });
    expect(started.id).toMatch(/^job-[0-9a-f]{8}$/);
    const running = await callTool(tool('exec_status'), { id: started.id });
    expect(running.status).toBe('running');
    const ended = await waitFor(
      () => callTool(tool('exec_status'), { id: started.id }),
      (s) => s.status !== 'running',
    );
    expect(ended).toMatchObject({ status: 'exited', exitCode: 4, output: 'first\nsecond\n', outputTruncated: false });
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

  it('asks for approval before starting a command outside the allow-list under policy ask', async () => {
    await expect(callTool(tool('exec_bg'), { command: 'touch x' })).rejects.toBeInstanceOf(ApprovalRequired);
    expect(fs.readdirSync(path.join(dir, 'exec-jobs'))).toEqual([]);
    const started = await callTool(tool('exec_bg'), { command: 'touch x' }, toolContext({ approved: true }));
    await waitFor(
      () => callTool(tool('exec_status'), { id: started.id }),
      (s) => s.status !== 'running',
    );
    expect(fs.existsSync(path.join(dir, 'workspace', 'x'))).toBe(true);
  });

  it('masks secret values in kept output', async () => {
    deps.secrets.add('bg-secret-value-123');
    const started = await callTool(tool('exec_bg'), { command: 'echo bg-secret-value-123' });
    const ended = await waitFor(
      () => callTool(tool('exec_status'), { id: started.id }),
      (s) => s.status !== 'running',
    );
    expect(ended.output).toBe('[REDACTED]\n');
  });

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
