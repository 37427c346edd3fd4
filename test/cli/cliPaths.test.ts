import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { cliWorkdir, spawnCli } from '../support/cliProcess';
import { Terminals } from '../support/cliTerminal';
import { tmuxUnavailable } from '../support/tmux';
import { waitFor } from '../support/waitFor';

jest.setTimeout(180_000);

const noTmux = tmuxUnavailable();
if (noTmux) process.stderr.write(`skipping the terminal tests: ${noTmux}\n`);

/** An A2A node that is not lango: its card (v1.0, two skills) and `routes`; 404 for anything else. */
async function otherNode(routes: Record<string, unknown> = {}): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const body = req.url === '/.well-known/agent-card.json' ? CARD : routes[req.url ?? ''];
    res.setHeader('content-type', 'application/json');
    if (body === undefined) res.statusCode = 404;
    res.end(body === undefined ? '{"error":"not found"}' : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const CARD = {
  name: 'Weather Agent',
  description: 'Forecasts from the other framework',
  version: '2.1.0',
  supportedInterfaces: [{ url: 'http://127.0.0.1:9/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: true },
  skills: [
    { id: 'forecast', name: 'forecast', description: 'Tomorrow in any city', tags: ['weather'] },
    { id: 'picnic', name: 'picnic planner', description: 'Whether to go out' },
  ],
};

/** Issue 34, item 7: every CLI path works as the README says; each input error exits 2 with the fix. */
(noTmux ? describe.skip : describe)(
  `CLI paths in real terminals (tmux)${noTmux ? ` (skipped: ${noTmux})` : ''}`,
  () => {
    const terminals = new Terminals();
    const cleanups: Array<() => unknown> = [];
    afterEach(async () => {
      terminals.closeAll();
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    const workdir = (extra = '') => {
      const cwd = cliWorkdir(extra);
      cleanups.push(() => fs.rmSync(cwd, { recursive: true, force: true }));
      return cwd;
    };

    it('a --url without a scheme, or not http(s), exits 2 with the URL it likely meant', async () => {
      const cwd = workdir();
      const bare = await terminals.run('--url 127.0.0.1:4000 agents', cwd);
      expect(bare).toEqual({
        code: 2,
        screen:
          'lango: --url must be the node\'s http:// or https:// base URL, such as http://127.0.0.1:4000 (got "127.0.0.1:4000"); ' +
          'did you mean --url http://127.0.0.1:4000?',
      });
      const named = await terminals.run('--url localhost:4000 chat hi', cwd);
      expect(named.code).toBe(2);
      expect(named.screen).toContain('did you mean --url http://localhost:4000?');
      const ftp = await terminals.run('--url ftp://127.0.0.1/ card', cwd);
      expect(ftp.code).toBe(2);
      expect(ftp.screen).toContain('(got "ftp://127.0.0.1/")');
    });

    it('config check catches a missing cardFile and reads one next to the configuration file', async () => {
      const cwd = workdir();
      const conf = path.join(cwd, 'conf');
      fs.mkdirSync(path.join(conf, 'agent-cards'), { recursive: true });
      const entries = (first: string, second: string) =>
        `tools: { browser: { enabled: false } }\na2a:\n  remoteAgents:\n` +
        `    - { name: near, cardFile: ${first} }\n    - { name: filed, cardFile: ${second} }\n`;
      fs.writeFileSync(path.join(conf, 'lango.config.yaml'), entries('./near.json', 'filed.json'));
      const missing = await terminals.run('--config conf/lango.config.yaml config check', cwd);
      expect(missing.code).toBe(2);
      expect(missing.screen).toContain(
        `a2a.remoteAgents[0].cardFile: no card file at ${conf}/near.json (a path is read from the configuration file's folder)`,
      );
      expect(missing.screen).toContain(
        `a2a.remoteAgents[1].cardFile: no card file at ${conf}/agent-cards/filed.json (a file name is looked up in agent-cards/ beside the configuration file)`,
      );
      fs.writeFileSync(path.join(conf, 'near.json'), JSON.stringify(CARD));
      fs.writeFileSync(path.join(conf, 'agent-cards', 'filed.json'), JSON.stringify(CARD));
      const found = await terminals.run('--config conf/lango.config.yaml config check', cwd);
      expect(found.code).toBe(0);
      expect(found.screen).toContain('2 remote agent(s)');
    });

    it('agents --url shows what any A2A node’s card says, a hostile catalog included, and one clear line for no node', async () => {
      const cwd = workdir();
      const plain = await otherNode();
      // Answers 200 with JSON of another shape where lango has its report and catalog.
      const hostile = await otherNode({
        '/node/agents': { root: 'x' },
        '/agents': { root: 'x', agents: [{ name: 1 }] },
      });
      const nothing = await new Promise<{ url: string; close: () => Promise<void> }>((resolve) => {
        const server = http.createServer((_req, res) => {
          res.statusCode = 404;
          res.end('no');
        });
        server.listen(0, '127.0.0.1', () =>
          resolve({
            url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            close: () => new Promise((done) => server.close(() => done())),
          }),
        );
      });
      cleanups.push(plain.close, hostile.close, nothing.close);

      const shown = await terminals.run(`--url ${plain.url} agents`, cwd);
      expect(shown).toEqual({
        code: 0,
        screen: [
          `Weather Agent (A2A node at ${plain.url}; no lango catalog: /agents HTTP 404)`,
          '  Forecasts from the other framework',
          '  version 2.1.0; streaming yes',
          'interfaces:',
          '  JSONRPC 1.0 http://127.0.0.1:9/a2a',
          'skills:',
          '  forecast [weather]',
          '    Tomorrow in any city',
          '  picnic planner',
          '    Whether to go out',
        ].join('\n'),
      });
      const fromHostile = await terminals.run(`--url ${hostile.url} agents`, cwd);
      expect(fromHostile.code).toBe(0);
      expect(fromHostile.screen.split('\n')[0]).toBe(
        `Weather Agent (A2A node at ${hostile.url}; no lango catalog: /agents HTTP 200, not a lango catalog)`,
      );
      const json = await terminals.run(`--url ${plain.url} agents --json`, cwd);
      expect(JSON.parse(json.screen)).toMatchObject({ node: plain.url, card: { name: 'Weather Agent' } });
      const none = await terminals.run(`--url ${nothing.url} agents`, cwd);
      expect(none).toEqual({
        code: 1,
        screen:
          `lango: the node at ${nothing.url} shows no agents: /node/agents HTTP 404, not JSON; /agents HTTP 404; ` +
          '/.well-known/agent-card.json HTTP 404',
      });
    });

    it('serve starts with a short banner on a terminal and a JSON line when piped', async () => {
      const cwd = workdir();
      const node = await terminals.serve(cwd);
      const banner = await node.terminal.waitForScreen(/Ctrl-C stops it\./);
      const lines = banner.split('\n').filter((line) => line.trim());
      expect(lines.slice(0, 6)).toEqual([
        `lango node lango-orchestrator at ${node.url}`,
        `  console  ${node.url}/console`,
        `  card     ${node.url}/.well-known/agent-card.json`,
        '  model    offline (built in, no network; set agent.provider and agent.apiKey for a real one)',
        '  config   ./lango.config.yaml; data ./.lango',
        'Ctrl-C stops it.',
      ]);
      expect(await node.stop()).toBe(0);

      const piped = spawnCli(['serve'], cwd);
      cleanups.push(() => piped.stop());
      const line = await waitFor(
        () =>
          piped
            .stderr()
            .split('\n')
            .find((l) => l.includes('"lango node listening"')),
        60_000,
        'the JSON start line',
      );
      const started = JSON.parse(line) as Record<string, unknown>;
      expect(started).toMatchObject({ level: 'info', message: 'lango node listening', component: 'cli' });
      expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(piped.stderr()).not.toContain('Ctrl-C stops it.');
    });
  },
);
