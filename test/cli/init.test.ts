import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCliInProcess } from '../support/cliProcess';
import { Terminals } from '../support/cliTerminal';
import { tmuxUnavailable } from '../support/tmux';
import { waitFor } from '../support/waitFor';

jest.setTimeout(240_000);

const REPO = path.resolve(__dirname, '../..');
const noTmux = tmuxUnavailable();

/**
 * Gives the written project the packages `npm install` would: lango itself
 * (this repository, built) and the lead's install for the rest, by symlink.
 */
function linkModules(project: string): void {
  const modules = path.join(project, 'node_modules');
  fs.mkdirSync(modules);
  const installed = path.join(REPO, 'node_modules');
  for (const name of fs.readdirSync(installed)) fs.symlinkSync(path.join(installed, name), path.join(modules, name));
  fs.symlinkSync(REPO, path.join(modules, 'lango'));
}

/** Issue 28, item 2: `lango init` writes a project ready for `npm start`. */
describe('lango init', () => {
  let cwd: string;
  const terminals = new Terminals();
  beforeAll(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-init-'));
  });
  afterAll(() => {
    terminals.closeAll();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('writes a config, a custom tool and its test; the project type-checks, its test passes, npm start serves the tool', async () => {
    const written = await runCliInProcess(['init', 'my-node'], cwd);
    expect(written.code).toBe(0);
    expect(written.out).toContain('  src/tools/wordCount.ts\n');
    expect(written.out).toContain('cd my-node && npm install && npm test && npm start');
    const project = path.join(cwd, 'my-node');
    expect(fs.readFileSync(path.join(project, 'src/tools/wordCount.ts'), 'utf8')).toContain('defineTool({');
    const manifest = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')) as {
      name: string;
      dependencies: Record<string, string>;
    };
    expect(manifest).toMatchObject({ name: 'my-node', dependencies: { lango: `file:${REPO}` } });

    // Never over a project that is there.
    const again = await runCliInProcess(['init', 'my-node'], cwd);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/already has package\.json, .*lango\.config\.yaml/);

    linkModules(project);
    const node = (args: string[]) => {
      const run = spawnSync(process.execPath, args, {
        cwd: project,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: project },
      });
      return { status: run.status, output: run.stdout + run.stderr };
    };
    expect(node([path.join(REPO, 'node_modules/typescript/bin/tsc'), '-p', '.', '--noEmit'])).toEqual({
      status: 0,
      output: '',
    });
    const tested = node([path.join(REPO, 'node_modules/jest/bin/jest.js'), '--ci', '--colors=false']);
    expect(tested.output).toMatch(/Tests: +2 passed, 2 total/);
    expect(tested.status).toBe(0);

    const started = spawn('npm', ['start'], {
      cwd: project,
      env: { PATH: process.env.PATH, HOME: project, PORT: '0', LOG_LEVEL: 'warn' },
      detached: true,
    });
    let output = '';
    started.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    started.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const url = await waitFor(
        () => /lango node listening at (http:\/\/127\.0\.0\.1:\d+) \(console: /.exec(output)?.[1],
        120_000,
        `npm start to serve (${output})`,
      );
      const chat = await runCliInProcess(['--url', url, 'chat', 'word_count text="the quick brown fox"'], cwd);
      expect(chat.code).toBe(0);
      expect(chat.out).toContain('⚙ librarian: word_count {"text":"the quick brown fox"}');
      expect(chat.out).toMatch(/"words":\s*4/);

      // Issue 34, item 7: the project's node holds its data folder as \`lango serve\` does, so the CLI in the
      // project's folder talks to it (only that node knows word_count) and a second node is refused.
      const lock = JSON.parse(fs.readFileSync(path.join(project, '.lango', 'lango.lock'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(lock).toMatchObject({ command: 'serve', url });
      expect(fs.statSync(path.join(project, '.lango', 'owner.token')).mode & 0o777).toBe(0o600);
      if (!noTmux) {
        const tools = await terminals.run('tools word_count', project);
        expect(tools.code).toBe(0);
        expect(tools.screen.split('\n')[0]).toBe('word_count  → librarian');
        const inFolder = await terminals.run('chat \'word_count text="one two three"\'', project);
        expect(inFolder.code).toBe(0);
        expect(inFolder.screen).toMatch(/"words":\s*3/);
        const second = await terminals.run('serve', project, { PORT: '0' });
        expect(second.code).toBe(2);
        expect(second.screen).toContain(`is in use by lango serve (pid ${String(lock.pid)}) at ${url}`);
      }
    } finally {
      process.kill(-(started.pid as number), 'SIGTERM');
      await new Promise((resolve) => started.once('exit', resolve));
    }
  });
});

/** Issue 37, item 7: `lango init DIR` never writes through a symbolic link or outside DIR. */
describe('lango init and symbolic links', () => {
  let cwd: string;
  let outside: string;
  beforeEach(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-init-links-'));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-init-outside-'));
  });
  afterEach(() => {
    fs.rmSync(cwd, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  /** Every file under `dir`, relative. */
  const filesUnder = (dir: string): string[] =>
    fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => fs.lstatSync(path.join(dir, f)).isFile());

  it('refuses a dangling link at DIR/lango.config.yaml and writes nothing, there or at its target', async () => {
    const project = path.join(cwd, 'p');
    fs.mkdirSync(project);
    const target = path.join(outside, 'planted.yaml');
    fs.symlinkSync(target, path.join(project, 'lango.config.yaml'));
    const { code, err } = await runCliInProcess(['init', 'p'], cwd);
    expect(code).toBe(2);
    expect(err).toContain(`${project} already has lango.config.yaml`);
    expect(fs.existsSync(target)).toBe(false);
    expect(fs.readdirSync(project)).toEqual(['lango.config.yaml']);
  });

  it('refuses DIR/src (or DIR/src/tools) as a link to a folder outside, and writes nothing', async () => {
    for (const linked of ['src', 'src/tools']) {
      const project = path.join(cwd, linked.replace('/', '-'));
      fs.mkdirSync(path.dirname(path.join(project, linked)), { recursive: true });
      fs.symlinkSync(outside, path.join(project, linked));
      const { code, err } = await runCliInProcess(['init', path.basename(project)], cwd);
      expect([linked, code]).toEqual([linked, 2]);
      expect(err).toContain(
        `${path.join(project, linked)} is a symbolic link; lango init writes only inside the folder`,
      );
      expect(filesUnder(outside)).toEqual([]);
      expect(fs.existsSync(path.join(project, 'package.json'))).toBe(false);
    }
  });

  it('refuses DIR itself as a link, and writes a project in a real folder', async () => {
    fs.symlinkSync(outside, path.join(cwd, 'linked'));
    const refused = await runCliInProcess(['init', 'linked'], cwd);
    expect(refused.code).toBe(2);
    expect(filesUnder(outside)).toEqual([]);
    const written = await runCliInProcess(['init', 'real'], cwd);
    expect(written.code).toBe(0);
    expect(filesUnder(path.join(cwd, 'real')).sort()).toEqual(
      [
        '.gitignore',
        'jest.config.js',
        'lango.config.yaml',
        'package.json',
        'src/main.ts',
        'src/tools/wordCount.ts',
        'test/wordCount.test.ts',
        'tsconfig.json',
      ].sort(),
    );
  });
});
