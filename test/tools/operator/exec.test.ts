import fs from 'node:fs';
import path from 'node:path';
import { ApprovalRequired, type AnyTool } from '../../../src/agent/tool';
import { execFamily } from '../../../src/tools/operator/family';
import { processesWith } from '../../support/processes';
import { waitFor } from '../../support/waitFor';
import { byName, callTool, tempDir, toolContext, itWhenSandboxed } from './context';
import { familyDeps } from './deps';

describe('exec_shell', () => {
  let dir: string;
  let cleanup: () => void;
  let close: () => void;
  let shell: AnyTool;
  let ws: string;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    const deps = await familyDeps(dir, { tools: { exec: { maxOutputBytes: 100, timeoutMs: 20_000 } } });
    close = deps.close;
    shell = byName((await execFamily.create(deps)).tools, 'exec_shell');
    ws = path.join(dir, 'workspace');
  });
  afterEach(async () => {
    close();
    cleanup();
  });

  it('runs a real command in the workspace and returns its exit code and output', async () => {
    const result = await callTool(shell, { command: 'pwd; echo out; echo err >&2; exit 3' });
    expect(result).toMatchObject({ exitCode: 3, stdout: `${ws}\nout\n`, stderr: 'err\n', timedOut: false, cwd: '.' });
  });

  it('runs in a sub-folder of the workspace and refuses a working directory outside it', async () => {
    fs.mkdirSync(path.join(ws, 'sub'));
    expect((await callTool(shell, { command: 'pwd', cwd: 'sub' })).stdout).toBe(`${path.join(ws, 'sub')}\n`);
    await expect(callTool(shell, { command: 'pwd', cwd: '..' })).rejects.toThrow('outside the workspace');
    await expect(callTool(shell, { command: 'pwd', cwd: '/tmp' })).rejects.toThrow('outside the workspace');
  });

  it('kills a command that outlives its timeout, children included', async () => {
    // Sleeps of an unusual length, far past the test's own timeout: only the kill can end them.
    const sleep = `sleep 6${Math.floor(Math.random() * 1e5)}.5`;
    const result = await callTool(shell, { command: `${sleep} & ${sleep}; echo never`, timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(result.stdout).toBe('');
    await waitFor(() => processesWith(sleep).length === 0, 20_000, 'both sleeps killed');
  });

  it('caps output, keeping the head and the tail', async () => {
    const result = await callTool(shell, { command: 'seq 1 1000' });
    expect(result.truncated).toBe(true);
    expect(result.stdout.startsWith('1\n2\n3\n')).toBe(true);
    expect(result.stdout.endsWith('999\n1000\n')).toBe(true);
    expect(result.stdout).toMatch(/\[\.\.\. \d+ bytes omitted \.\.\.\]/);
  });

  it('does not hand the node environment to commands', async () => {
    process.env.LANGO_TEST_LEAK = 'should-not-leak';
    try {
      const result = await callTool(shell, { command: 'echo "[$LANGO_TEST_LEAK]"; echo $HOME' });
      expect(result.stdout).toBe(`[]\n${ws}\n`);
    } finally {
      delete process.env.LANGO_TEST_LEAK;
    }
  });

  it('stops the command when the turn is cancelled', async () => {
    const controller = new AbortController();
    const sleep = `sleep 6${Math.floor(Math.random() * 1e5)}.5`;
    // Cancelled once the command runs, not at a guessed moment.
    void waitFor(() => processesWith(sleep).length > 0, 20_000, 'the command running').then(() => controller.abort());
    const result = await callTool(shell, { command: sleep }, toolContext({ signal: controller.signal }));
    expect(result.signal).toBe('SIGTERM');
  });

  it('masks registered secret values in the output', async () => {
    const { dir: d2, cleanup: c2 } = tempDir();
    const deps = await familyDeps(d2);
    try {
      deps.secrets.add('hunter2-value');
      const tool = byName((await execFamily.create(deps)).tools, 'exec_shell');
      const result = await callTool(tool, { command: 'echo hunter2-value' });
      expect(result.stdout).toBe('[REDACTED]\n');
    } finally {
      await deps.close();
      c2();
    }
  });
});

describe('tools.exec.policy', () => {
  async function shellWith(policy: 'allow' | 'deny' | 'ask', allow: string[]) {
    const { dir, cleanup } = tempDir();
    const deps = await familyDeps(dir, { tools: { exec: { policy, allow } } });
    const tool = byName((await execFamily.create(deps)).tools, 'exec_shell');
    return { tool, dir, done: () => (deps.close(), cleanup()) };
  }

  it('with deny runs allow-listed commands and refuses the rest', async () => {
    const { tool, done } = await shellWith('deny', ['echo', 'git status']);
    try {
      expect((await callTool(tool, { command: 'echo hi' })).stdout).toBe('hi\n');
      await expect(callTool(tool, { command: 'touch x' })).rejects.toThrow('not on the allow-list');
      await expect(callTool(tool, { command: 'echo hi; touch x' })).rejects.toThrow('not on the allow-list');
      await expect(callTool(tool, { command: 'echo $(touch x)' })).rejects.toThrow('not on the allow-list');
    } finally {
      done();
    }
  });

  itWhenSandboxed('with ask asks for approval outside the allow-list and runs after the yes', async () => {
    const { tool, dir, done } = await shellWith('ask', ['echo']);
    try {
      expect((await callTool(tool, { command: 'echo ok' })).exitCode).toBe(0);
      const asked = callTool(tool, { command: 'touch made.txt' });
      await expect(asked).rejects.toBeInstanceOf(ApprovalRequired);
      await expect(callTool(tool, { command: 'touch made.txt' })).rejects.toThrow('touch made.txt');
      expect(fs.existsSync(path.join(dir, 'workspace', 'made.txt'))).toBe(false);
      const ran = await callTool(tool, { command: 'touch made.txt' }, toolContext({ approved: true }));
      expect(ran.exitCode).toBe(0);
      expect(fs.existsSync(path.join(dir, 'workspace', 'made.txt'))).toBe(true);
    } finally {
      done();
    }
  });
});

describe('exec_shell working directory', () => {
  it('names a working directory that does not exist or is a file', async () => {
    const { dir, cleanup } = tempDir();
    const deps = await familyDeps(dir);
    try {
      const shell = byName((await execFamily.create(deps)).tools, 'exec_shell');
      fs.writeFileSync(path.join(dir, 'workspace', 'file.txt'), 'x');
      await expect(callTool(shell, { command: 'pwd', cwd: 'missing' })).rejects.toThrow(
        'working directory "missing" is not a folder',
      );
      await expect(callTool(shell, { command: 'pwd', cwd: 'file.txt' })).rejects.toThrow('is not a folder');
    } finally {
      await deps.close();
      cleanup();
    }
  });
});
