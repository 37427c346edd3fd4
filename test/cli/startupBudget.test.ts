import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CLI_MAIN } from '../support/cliProcess';

jest.setTimeout(60_000);

/**
 * Issue 35: a command loads only what it uses. The budget is counted in
 * modules (what a command requires, read from `require.cache` as the process
 * exits), never in milliseconds: wall times live in `npm run bench --
 * cliStartup`. Built-in modules are not counted (they are in the binary).
 */
const RECORDER = `
const fs = require('node:fs');
process.on('exit', () => fs.writeFileSync(process.env.LANGO_MODULES_OUT, JSON.stringify(Object.keys(require.cache))));
`;

/** Packages no light command may load: the node's own stack. */
const HEAVY = [
  '@a2a-js/sdk',
  'zod',
  'yaml',
  'express',
  'winston',
  'better-sqlite3',
  'openai',
  'pg',
  '@grpc/grpc-js',
  'undici',
  'jose',
  '@opentelemetry',
  'playwright-core',
  'prom-client',
];

/** The most modules `--version` may load: the CLI's entry, its command table and commander (12 when written). */
const VERSION_BUDGET = 15;
/** The most modules `agents --url` may load: that command, its HTTP requests and views (24 when written). */
const AGENTS_URL_BUDGET = 30;

describe('the CLI start-up budget (modules loaded, not time)', () => {
  let dir: string;
  let recorder: string;
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-budget-'));
    recorder = path.join(dir, 'record-modules.js');
    fs.writeFileSync(recorder, RECORDER);
    // Any A2A node: a card and nothing else, so `agents --url` takes its longest path (report, catalog, card).
    server = http.createServer((req, res) => {
      if (req.url === '/.well-known/agent-card.json') {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            name: 'elsewhere',
            description: 'another A2A node',
            skills: [{ id: 's', name: 'forecast' }],
          }),
        );
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The modules `lango ARGS` loaded, relative to the repository (node_modules/… for packages). */
  async function modulesOf(args: string[]): Promise<{ code: number | null; out: string; modules: string[] }> {
    const out = path.join(dir, `modules-${args.join('_').replace(/\W+/g, '-')}.json`);
    const child = spawn(process.execPath, ['--require', recorder, CLI_MAIN, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, LANGO_MODULES_OUT: out },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const repo = path.resolve(__dirname, '../..');
    const modules = (JSON.parse(fs.readFileSync(out, 'utf8')) as string[])
      .filter((file) => file !== recorder)
      .map((file) => path.relative(repo, file));
    return { code, out: printed, modules };
  }

  const packages = (modules: string[]) =>
    [...new Set(modules.flatMap((m) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(m)?.[1] ?? []))].sort();

  it('--version loads the CLI layer and commander, nothing of the node', async () => {
    const { code, out, modules } = await modulesOf(['--version']);
    expect(code).toBe(0);
    expect(out).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(packages(modules)).toEqual(['commander']);
    expect(modules.length).toBeLessThanOrEqual(VERSION_BUDGET);
    // No command's module: the table names them, the one that runs is loaded.
    expect(modules.filter((m) => m.startsWith('dist/cli/commands/'))).toEqual([]);
    // No configuration, store, agent or server module: those are loaded by the commands that run a node.
    for (const heavy of ['dist/app.js', 'dist/config/load.js', 'dist/index.js', 'dist/observe/nodeInfo.js'])
      expect(modules).not.toContain(heavy);
  });

  it('agents --url reads any A2A node without loading the configuration, the A2A client or the node', async () => {
    const { code, out, modules } = await modulesOf(['--url', url, 'agents']);
    expect(code).toBe(0);
    expect(out).toContain(`elsewhere (A2A node at ${url}; no lango catalog: /agents HTTP 404)`);
    for (const heavy of HEAVY) expect(packages(modules).filter((name) => name.startsWith(heavy))).toEqual([]);
    expect(modules.length).toBeLessThanOrEqual(AGENTS_URL_BUDGET);
    expect(modules.filter((m) => m.startsWith('dist/cli/commands/'))).toEqual(['dist/cli/commands/agents.js']);
    expect(modules).not.toContain('dist/config/load.js');
  });

  it('a command that runs the node loads it (the budget counts what is used, and this is used)', async () => {
    const { code, modules } = await modulesOf(['config', 'check']);
    expect(code).toBe(0);
    expect(modules).toContain('dist/config/load.js');
    expect(packages(modules)).toEqual(expect.arrayContaining(['commander', 'yaml', 'zod']));
    expect(modules).not.toContain('dist/app.js');
  });
});
