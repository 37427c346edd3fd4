import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/main';

interface BadCase {
  name: string;
  /** Files written into the temp working directory before the run. */
  files?: Record<string, string>;
  argv: string[];
  env?: NodeJS.ProcessEnv;
  /** Every pattern must appear in what the CLI printed on stderr. */
  names: RegExp[];
  /**
   * A known defect: the test is `it.failing` (passes while the defect is
   * present, fails once it is fixed — then drop this field).
   */
  defect?: string;
}

const BAD: BadCase[] = [
  {
    name: 'YAML that does not parse',
    files: { 'lango.config.yaml': 'server:\n  port: [1,\n' },
    argv: ['serve'],
    names: [/lango\.config\.yaml/],
  },
  {
    name: 'JSON that does not parse',
    files: { 'c.json': '{"server": {"port": 1},,}' },
    argv: ['--config', 'c.json', 'serve'],
    names: [/c\.json/],
  },
  {
    name: 'a port that is a string',
    files: { 'lango.config.yaml': 'server:\n  port: abc\n' },
    argv: ['serve'],
    names: [/server\.port/],
  },
  {
    name: 'a port out of range',
    files: { 'lango.config.yaml': 'server:\n  port: 70000\n' },
    argv: ['serve'],
    names: [/server\.port/],
  },
  {
    name: 'a misspelt top-level key',
    files: { 'lango.config.yaml': 'serer:\n  port: 4000\n' },
    argv: ['serve'],
    names: [/serer/],
  },
  {
    name: 'an unknown provider',
    files: { 'lango.config.yaml': 'agent:\n  provider: gpt\n' },
    argv: ['serve'],
    names: [/agent\.provider/],
  },
  {
    name: 'a log level that does not exist',
    files: { 'lango.config.yaml': 'logLevel: loud\n' },
    argv: ['serve'],
    names: [/logLevel/],
  },
  {
    name: 'a retention that is not a duration',
    files: { 'lango.config.yaml': 'a2a:\n  taskRetention: forever\n' },
    argv: ['serve'],
    names: [/a2a\.taskRetention/],
  },
  {
    name: 'a remote agent with two card sources',
    files: {
      'lango.config.yaml':
        'a2a:\n  remoteAgents:\n    - name: b\n      agentCardUrl: http://127.0.0.1:9/card.json\n      baseUrl: http://127.0.0.1:9\n',
    },
    argv: ['serve'],
    names: [/a2a\.remoteAgents/, /exactly one of agentCardUrl, baseUrl or cardFile/],
  },
  {
    name: 'a remote agent name with spaces',
    files: {
      'lango.config.yaml': 'a2a:\n  remoteAgents:\n    - name: "my agent"\n      baseUrl: http://127.0.0.1:9\n',
    },
    argv: ['serve'],
    names: [/a2a\.remoteAgents/, /name/],
  },
  {
    name: 'an unset ${VAR}',
    files: { 'lango.config.yaml': 'agent:\n  apiKey: ${LANGO_TEST_UNSET_KEY}\n' },
    argv: ['serve'],
    names: [/LANGO_TEST_UNSET_KEY/],
  },
  {
    name: 'PORT that is not a number',
    files: { 'lango.config.yaml': 'logLevel: warn\n' },
    argv: ['serve'],
    env: { PORT: 'eighty' },
    names: [/PORT/],
  },
  { name: '--config naming a missing file', argv: ['--config', 'nope.yaml', 'serve'], names: [/nope\.yaml/] },
  {
    name: 'a public host without authentication',
    files: {
      'lango.config.yaml':
        'logLevel: error\nserver:\n  host: 0.0.0.0\n  port: 0\ntools:\n  browser:\n    enabled: false\n',
    },
    argv: ['serve'],
    names: [/0\.0\.0\.0/, /a2a\.auth|allowUnauthenticated/],
  },
  { name: 'an unknown command', argv: ['frobnicate'], names: [/frobnicate/] },
  { name: 'an unknown option', argv: ['serve', '--bogus'], names: [/--bogus/] },
  {
    name: 'config check on a bad file',
    files: { 'lango.config.yaml': 'server:\n  port: -1\n' },
    argv: ['config', 'check'],
    names: [/server\.port/],
  },
];

function listTree(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

describe('bad configuration and bad input at the CLI', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-rel-cli-'));
  });
  afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

  for (const bad of BAD) {
    const test = bad.defect ? it.failing : it;
    test(`exits 2 naming what is wrong and writes nothing: ${bad.name}${bad.defect ? ' (known defect)' : ''}`, async () => {
      for (const [file, text] of Object.entries(bad.files ?? {})) fs.writeFileSync(path.join(cwd, file), text);
      const before = listTree(cwd);
      let out = '';
      let err = '';
      // A right case exits 2 before anything starts and never waits on this; a case that wrongly starts serving
      // (it prints nothing to say so) is stopped after a generous 20 s and fails on its exit code.
      const code = await runCli(bad.argv, {
        io: { out: (s) => void (out += s), err: (s) => void (err += s) },
        env: { ...bad.env },
        cwd,
        stopSignal: new Promise((resolve) => setTimeout(resolve, 20_000).unref()),
      });
      expect({ code, err }).toEqual({ code: 2, err: expect.any(String) });
      for (const pattern of bad.names) expect(err).toMatch(pattern);
      expect(err).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(out).not.toMatch(/listening/);
      expect(listTree(cwd)).toEqual(before);
      for (const [file, text] of Object.entries(bad.files ?? {}))
        expect(fs.readFileSync(path.join(cwd, file), 'utf8')).toBe(text);
    });
  }
});
