import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCliInProcess } from '../support/cliProcess';
import { waitFor } from '../support/waitFor';

jest.setTimeout(240_000);

const REPO = path.resolve(__dirname, '../..');

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
  beforeAll(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-init-'));
  });
  afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));

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
    } finally {
      process.kill(-(started.pid as number), 'SIGTERM');
      await new Promise((resolve) => started.once('exit', resolve));
    }
  });
});
