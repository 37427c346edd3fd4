import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app';
import { runCliInProcess } from '../support/cliProcess';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';

const lango = runCliInProcess;

const NO_BROWSER = 'tools:\n  browser:\n    enabled: false\n';

describe('lango CLI', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-cli-'));
    fs.writeFileSync(path.join(cwd, 'lango.config.yaml'), NO_BROWSER);
  });
  afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it('config check says where the configuration came from and exits 0', async () => {
    const { code, out } = await lango(['config', 'check'], cwd);
    expect(code).toBe(0);
    expect(out).toContain(`configuration ok (${path.join(cwd, 'lango.config.yaml')})`);
    expect(out).toContain('provider offline');
  });

  it('config check exits 2 with one line per bad key path and writes nothing', async () => {
    fs.writeFileSync(path.join(cwd, 'bad.yaml'), 'server:\n  port: -1\nagent:\n  multiAgent: "yes"\n  extra: 1\n');
    const { code, out, err } = await lango(['--config', 'bad.yaml', 'config', 'check'], cwd);
    expect(code).toBe(2);
    expect(out).toBe('');
    const lines = err.trim().split('\n');
    expect(lines[0]).toMatch(/^lango: invalid configuration in .*bad\.yaml \(3 problems\)$/);
    expect(lines.slice(1).map((l) => l.trim())).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^server\.port: /),
        expect.stringMatching(/^agent\.multiAgent: /),
        'agent: unknown key "extra"',
      ]),
    );
    expect(err).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(path.join(cwd, '.lango'))).toBe(false);
  });

  it('exits 2 on an unknown command or option', async () => {
    expect((await lango(['frobnicate'], cwd)).code).toBe(2);
    expect((await lango(['agents', '--colour'], cwd)).code).toBe(2);
  });

  it('agents --json shows the seven specialists with their tools and no unmatched tools', async () => {
    const { code, out } = await lango(['agents', '--json'], cwd);
    expect(code).toBe(0);
    const tree = JSON.parse(out) as {
      root: { name: string; tools: string[]; subAgents: { name: string; tools: string[] }[] };
      unmatchedTools: string[];
    };
    expect(tree.root.name).toBe('lango-orchestrator');
    expect(tree.root.tools).toEqual([]);
    expect(tree.root.subAgents.map((a) => a.name)).toEqual([
      'operator',
      'vault',
      'librarian',
      'automator',
      'planner',
      'chronicler',
    ]);
    expect(tree.root.subAgents[0].tools).toEqual(expect.arrayContaining(['exec_shell', 'fs_read']));
    expect(tree.unmatchedTools).toEqual([]);
  });

  it('agents --instruction prints the routing table, and single-agent mode prints lango-agent', async () => {
    const multi = await lango(['agents', '--instruction'], cwd);
    expect(multi.out).toContain('### operator');
    expect(multi.out).toContain('NEVER invent or abbreviate agent names');
    fs.writeFileSync(path.join(cwd, 'lango.config.yaml'), NO_BROWSER + 'agent:\n  multiAgent: false\n');
    const single = await lango(['agents'], cwd);
    expect(single.out.split('\n')[0]).toBe('lango-agent');
  });

  it('agents --check shows a healthy peer and a skipped one with its reason, exiting 1', async () => {
    const peerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-peer-'));
    const peer = await createApp(
      resolveConfig({
        server: { port: 0 },
        dataDir: peerDir,
        a2a: { agentName: 'peer' },
        tools: { browser: { enabled: false } },
      }),
      {
        logger: createMemoryLogger(),
      },
    );
    const dead = http.createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const deadPort = (dead.address() as AddressInfo).port;
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    try {
      const url = await peer.listen();
      fs.writeFileSync(
        path.join(cwd, 'lango.config.yaml'),
        NO_BROWSER +
          `a2a:\n  cardFetchTimeoutMs: 10000\n  remoteAgents:\n` +
          `    - { name: weather, baseUrl: "${url}" }\n` +
          `    - { name: ghost, baseUrl: "http://127.0.0.1:${deadPort}" }\n`,
      );
      const { code, out } = await lango(['agents', '--check'], cwd);
      expect(code).toBe(1);
      expect(out).toMatch(/^ {2}weather +healthy +http:\/\/127\.0\.0\.1:\d+\S* \(A2A 1\.0/m);
      expect(out).toMatch(/^ {2}ghost +skipped +http:\/\/127\.0\.0\.1:\d+\S* \(.*reason: .*(refused|ECONNREFUSED)/im);
      const json = JSON.parse((await lango(['agents', '--json', '--check'], cwd)).out) as {
        root: { subAgents: { name: string; kind: string; description: string }[] };
        remoteAgents: { name: string; state: string }[];
      };
      // A peer that does not answer stays in the tree as a stand-in saying so (issue 28).
      expect(json.root.subAgents.slice(-2)).toMatchObject([
        { name: 'weather', kind: 'remote' },
        { name: 'ghost', kind: 'remote', description: expect.stringMatching(/^Unavailable now \(retrying\)\./) },
      ]);
      expect(json.remoteAgents.map((p) => [p.name, p.state])).toEqual([
        ['weather', 'healthy'],
        ['ghost', 'skipped'],
      ]);
    } finally {
      await peer.close();
      fs.rmSync(peerDir, { recursive: true, force: true });
    }
  });

  it('chat answers one message, naming who answers, each tool call with its arguments and its result once', async () => {
    const greeting = await lango(['chat', 'hello'], cwd);
    expect(greeting.code).toBe(0);
    expect(greeting.out).toMatch(/^lango-orchestrator: Hello!/);
    const shell = await lango(['chat', 'exec_shell', '{"command":"echo cli-$((2+3))"}'], cwd);
    expect(shell.code).toBe(0);
    expect(shell.out).toContain('→ lango-orchestrator hands over to operator');
    expect(shell.out).toContain('⚙ operator: exec_shell {"command":"echo cli-$((2+3))"}');
    expect(shell.out).toContain('✓ exec_shell done');
    expect(shell.out.match(/cli-5/g)).toHaveLength(1);
    expect(fs.existsSync(path.join(cwd, '.lango', 'lango.lock'))).toBe(false);
  });

  it('chat names a remote call by the peer and the endpoint it goes to, not the card URL', async () => {
    const peerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-peer-'));
    const peer = await createApp(
      resolveConfig({
        server: { port: 0 },
        dataDir: peerDir,
        a2a: { agentName: 'peer' },
        tools: { browser: { enabled: false } },
      }),
      { logger: createMemoryLogger() },
    );
    try {
      const url = await peer.listen();
      fs.writeFileSync(
        path.join(cwd, 'lango.config.yaml'),
        NO_BROWSER + `a2a:\n  remoteAgents:\n    - { name: weather, baseUrl: "${url}" }\n`,
      );
      const { code, out } = await lango(['chat', 'ask weather: hello'], cwd);
      expect(code).toBe(0);
      const remoteLines = out.split('\n').filter((l) => l.includes('⇄ weather'));
      expect(remoteLines.find((l) => l.includes('sending'))).toMatch(
        new RegExp(`⇄ weather at ${url.replace(/[.]/g, '\\.')}\\S*: sending$`),
      );
      expect(remoteLines.join('\n')).not.toContain('agent-card.json');
      expect(remoteLines.filter((l) => l.endsWith(': completed'))).toHaveLength(1);
      expect(out).toMatch(/^weather: /m);
    } finally {
      await peer.close();
      fs.rmSync(peerDir, { recursive: true, force: true });
    }
  });

  it('card --out writes the card a peer would fetch', async () => {
    const { code } = await lango(['card', '--out', 'agent-cards/me.json'], cwd);
    expect(code).toBe(0);
    const card = JSON.parse(fs.readFileSync(path.join(cwd, 'agent-cards/me.json'), 'utf8')) as {
      name: string;
      skills: unknown[];
    };
    expect(card.name).toBe('lango-orchestrator');
    expect(card.skills.length).toBeGreaterThan(1);
  });

  it('doctor lists each tool family as on or off', async () => {
    const { code, out } = await lango(['doctor', '--json'], cwd);
    expect(code).toBe(0);
    const report = JSON.parse(out) as { families: { name: string; state: string }[] };
    expect(report.families).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'exec', state: 'on' }),
        expect.objectContaining({ name: 'browser', state: 'off' }),
      ]),
    );
  });
});

describe('npm start (the built CLI: lango serve)', () => {
  it('serves the card and answers hello over A2A, then stops cleanly on SIGTERM', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-serve-'));
    fs.writeFileSync(path.join(cwd, 'lango.config.yaml'), NO_BROWSER);
    const main = path.resolve(__dirname, '../../dist/cli/main.js');
    expect(fs.existsSync(main)).toBe(true); // `npm test` builds first (pretest)
    const child = spawn(process.execPath, [main, 'serve'], {
      cwd,
      env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let log = '';
        const timer = setTimeout(() => reject(new Error(`no listening line within 20 s:\n${log}`)), 20_000);
        child.stderr.on('data', (chunk: Buffer) => {
          log += chunk.toString();
          const match = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(log);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}:\n${log}`)));
      });
      const card = (await (await fetch(`${url}/.well-known/agent-card.json`)).json()) as { name: string };
      expect(card.name).toBe('lango-orchestrator');
      const reply = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } },
        }),
      });
      const body = (await reply.json()) as {
        result: { task: { status: { state: string }; artifacts: { parts: { text: string }[] }[] } };
      };
      expect(body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(body.result.task.artifacts[0].parts[0].text).toMatch(/^Hello!/);
    } finally {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});
