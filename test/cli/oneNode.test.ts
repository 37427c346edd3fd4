import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { acquireDataLock, readDataLock } from '../../src/serve/dataLock';
import { cliWorkdir, spawnCli, startServe, type CliProcess, runCliInProcess } from '../support/cliProcess';

jest.setTimeout(90_000);

const lango = runCliInProcess;

/** A2A tasks the node recorded: a turn that went through the node over A2A leaves one. */
function taskCount(cwd: string): number {
  const db = new Database(path.join(cwd, '.lango', 'lango.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM a2a_tasks').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('one node per data folder', () => {
  let cwd: string;
  let serve: CliProcess | undefined;
  beforeEach(() => {
    cwd = cliWorkdir();
  });
  afterEach(async () => {
    await serve?.stop();
    serve = undefined;
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('serve holds the folder: chat, agents and card go to it over A2A, a second serve exits 2 naming it', async () => {
    const started = await startServe(cwd);
    serve = started.serve;
    const holder = readDataLock(path.join(cwd, '.lango'));
    expect(holder).toMatchObject({ pid: serve.child.pid, command: 'serve', url: started.url });

    const before = taskCount(cwd);
    const chat = await lango(['chat', 'exec_shell', '{"command":"echo via-$((40+2))"}'], cwd);
    expect(chat.code).toBe(0);
    expect(chat.out).toContain('⚙ operator: exec_shell {"command":"echo via-$((40+2))"}');
    expect(chat.out).toContain('via-42');
    // The turn ran on the node: it is one of the node's A2A tasks.
    expect(taskCount(cwd)).toBe(before + 1);

    // The node's own report (its owner-only /node/agents): the tree with its tools, as in-process.
    const agents = await lango(['agents'], cwd);
    expect(agents.code).toBe(0);
    expect(agents.out.split('\n')[0]).toBe('lango-orchestrator');
    expect(agents.out).toMatch(/^ {4}tools: exec_shell, /m);
    const card = await lango(['card'], cwd);
    expect(card.code).toBe(0);
    expect((JSON.parse(card.out) as { supportedInterfaces: { url: string }[] }).supportedInterfaces[0].url).toContain(
      started.url,
    );

    const second = spawnCli(['serve'], cwd);
    expect(await second.exited).toBe(2);
    expect(second.stderr()).toContain(
      `is in use by lango serve (pid ${serve.child.pid}) at ${started.url}; one node per data folder: ` +
        'give this one another with --data-dir DIR or LANGO_DATA_DIR=DIR',
    );
    // The first node is untouched and still answers.
    expect((await lango(['chat', 'hello'], cwd)).out).toMatch(/^lango-orchestrator: Hello!/);
    expect(await serve.stop()).toBe(0);
    serve = undefined;
    expect(fs.existsSync(path.join(cwd, '.lango', 'lango.lock'))).toBe(false);
  });

  it('--url talks to a node elsewhere; a folder held by an in-process command makes others exit 2', async () => {
    const other = cliWorkdir();
    try {
      const started = await startServe(other);
      serve = started.serve;
      const card = await lango(['--url', started.url, 'card'], cwd);
      expect(card.code).toBe(0);
      expect(JSON.parse(card.out)).toMatchObject({ name: 'lango-orchestrator' });
      // The command never opened its own folder.
      expect(fs.existsSync(path.join(cwd, '.lango'))).toBe(false);
    } finally {
      await serve?.stop();
      serve = undefined;
      fs.rmSync(other, { recursive: true, force: true });
    }

    const held = acquireDataLock(path.join(cwd, '.lango'), 'chat');
    try {
      const busy = await lango(['agents'], cwd);
      expect(busy.code).toBe(2);
      expect(busy.err).toContain(`is in use by lango chat (pid ${process.pid})`);
    } finally {
      held.release();
    }
    expect((await lango(['agents'], cwd)).code).toBe(0);
  });

  it('a lock left by a dead process is stale: the next serve takes the folder', async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    fs.mkdirSync(path.join(cwd, '.lango'), { recursive: true });
    fs.writeFileSync(
      path.join(cwd, '.lango', 'lango.lock'),
      JSON.stringify({ pid: dead, command: 'serve', url: 'http://127.0.0.1:1', startedAt: '' }),
    );
    expect(readDataLock(path.join(cwd, '.lango'))).toBeUndefined();
    const started = await startServe(cwd);
    serve = started.serve;
    expect(readDataLock(path.join(cwd, '.lango'))).toMatchObject({ pid: serve.child.pid, url: started.url });
  });

  it('prints the version on every command', async () => {
    const version = (
      JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    for (const argv of [['--version'], ['chat', '--version'], ['serve', '-V'], ['config', 'check', '--version']]) {
      const { code, out } = await lango(argv, cwd);
      expect([argv.join(' '), code, out.trim()]).toEqual([argv.join(' '), 0, version]);
    }
  });
});
