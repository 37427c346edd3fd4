import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CLI_MAIN, cliWorkdir, runCliInProcess, spawnCli } from '../support/cliProcess';
import { waitFor } from '../support/waitFor';

jest.setTimeout(120_000);

/** Every folder and file under `dir` (itself included) with its permission bits. */
function modesUnder(dir: string): { path: string; kind: 'folder' | 'file'; mode: number }[] {
  const entries = [{ path: '.', kind: 'folder' as const, mode: fs.statSync(dir).mode & 0o777 }];
  for (const name of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const stat = fs.lstatSync(path.join(dir, name));
    entries.push({ path: name, kind: stat.isDirectory() ? 'folder' : 'file', mode: stat.mode & 0o777 } as never);
  }
  return entries;
}

/** Runs `lango serve` in `cwd` and resolves with its exit code and stderr; it must end on its own (a refusal). */
async function refusedServe(cwd: string): Promise<{ code: number | null; err: string }> {
  const serve = spawnCli(['serve'], cwd, { LOG_LEVEL: 'error' });
  const timer = setTimeout(() => void serve.stop(), 60_000);
  try {
    const code = await serve.exited;
    return { code, err: serve.stderr() };
  } finally {
    clearTimeout(timer);
  }
}

/** Issue 37, item 7: the data folder is the user's alone, whatever the umask, and a planted key stops the node. */
describe('the data folder', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  const workdir = () => {
    const cwd = cliWorkdir();
    dirs.push(cwd);
    return cwd;
  };

  it('is created 0700 with every folder in it 0700 and every file 0600 under umask 000', async () => {
    const cwd = workdir();
    const child = spawn('sh', ['-c', `umask 000 && exec "${process.execPath}" "${CLI_MAIN}" serve`], {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, PORT: '0', LOG_LEVEL: 'error' },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const dataDir = path.join(cwd, '.lango');
      await waitFor(
        () => {
          try {
            return (JSON.parse(fs.readFileSync(path.join(dataDir, 'lango.lock'), 'utf8')) as { url?: string }).url;
          } catch {
            return undefined;
          }
        },
        60_000,
        'serve to record its URL',
      );
      // What the agent's tools create while it serves: a workspace file and folder, a background job's log, a skill.
      const turns = [
        'fs_write {"path": "notes/todo.txt", "content": "buy milk"}',
        'exec_bg {"command": "echo background"}',
        'create_skill {"name": "greet", "description": "says hi", "type": "prompt", "body": "Say hi."}',
      ];
      for (const turn of turns) expect((await runCliInProcess(['chat', turn], cwd)).code).toBe(0);
      const entries = modesUnder(dataDir);
      const names = entries.map((e) => e.path);
      for (const expected of [
        '.',
        'lango.db',
        'master.key',
        'owner.token',
        'lango.lock',
        'skills',
        'workspace',
        'exec-jobs',
      ])
        expect(names).toContain(expected);
      expect(names).toContain(path.join('workspace', 'notes', 'todo.txt'));
      expect(names.some((name) => name.startsWith(`exec-jobs${path.sep}`))).toBe(true);
      expect(names).toContain(path.join('skills', 'greet', 'SKILL.md'));
      const loose = entries.filter((e) => e.mode !== (e.kind === 'folder' ? 0o700 : 0o600));
      expect(loose).toEqual([]);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  describe('refuses to start (exit 2, naming the path) when the master key could be planted or read', () => {
    const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());

    /** A folder whose node has run once (its master key written), then `tamper`ed with. */
    async function tampered(tamper: (dataDir: string) => void): Promise<{ cwd: string; dataDir: string }> {
      const cwd = workdir();
      expect((await runCliInProcess(['doctor'], cwd)).code).toBe(0);
      const dataDir = path.join(cwd, '.lango');
      expect(fs.existsSync(path.join(dataDir, 'master.key'))).toBe(true);
      tamper(dataDir);
      return { cwd, dataDir };
    }

    const cases: [string, (dataDir: string) => void, (dataDir: string) => string][] = [
      [
        'master.key belongs to another user',
        (d) => fs.chownSync(path.join(d, 'master.key'), nobody, nobody),
        (d) => `the vault master key ${d}/master.key belongs to another user (uid ${nobody}); refusing to start`,
      ],
      [
        'master.key is readable by others',
        (d) => fs.chmodSync(path.join(d, 'master.key'), 0o644),
        (d) => `the vault master key ${d}/master.key is readable or writable by others (mode 644); refusing to start`,
      ],
      [
        'its folder belongs to another user',
        (d) => fs.chownSync(d, nobody, nobody),
        (d) => `the folder of the vault master key ${d} belongs to another user (uid ${nobody}); refusing to start`,
      ],
      [
        'its folder is writable by others',
        (d) => fs.chmodSync(d, 0o777),
        (d) => `the folder of the vault master key ${d} is writable by others (mode 777); refusing to start`,
      ],
    ];
    it.each(cases)('%s', async (_name, tamper, message) => {
      const { cwd, dataDir } = await tampered(tamper);
      const before = fs.readdirSync(dataDir).sort();
      const { code, err } = await refusedServe(cwd);
      expect(code).toBe(2);
      expect(err).toContain(`lango: ${message(dataDir)}`);
      // Refused before it wrote anything: no lock, no token.
      expect(fs.readdirSync(dataDir).sort()).toEqual(before);
      // In-process commands take the same check.
      const chat = await runCliInProcess(['chat', 'hello'], cwd);
      expect(chat.code).toBe(2);
      expect(chat.err).toContain(message(dataDir));
    });
  });
});
