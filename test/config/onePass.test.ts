import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { createApp, defineTool, resolveConfig } from '../../src/index';
import { ConfigError } from '../../src/errors';
import { createMemoryLogger } from '../../src/log/logger';
import { specRows, type SpecRow } from '../../src/orchestration/specs';
import { runCliInProcess } from '../support/cliProcess';

/** Issue 28, item 4: every problem of a configuration at once, each naming its key path. */
describe('configuration checked in one pass', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-config-one-pass-'));
  });
  afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it('lango config check lists all five problems of a file in one run, with "did you mean" at every level', async () => {
    fs.writeFileSync(
      path.join(cwd, 'lango.config.yaml'),
      [
        'agnet:', // a top-level typo
        '  multiAgent: true',
        'server:',
        '  prot: 4000', // a nested typo
        'tools:',
        '  exec:',
        '    policy: alow', // a value not among the allowed ones
        'a2a:',
        '  remoteAgents:',
        '    - name: Operator', // named like a local specialist: a rule across fields
        '      baseUrl: "http://127.0.0.1:1"',
        '    - name: weather', // a schema rule on one entry
        '      baseUrl: "http://127.0.0.1:2"',
        '      cardFile: weather.json',
        '',
      ].join('\n'),
    );
    // The card file exists (beside the configuration file, in agent-cards/): only the entry's shape is wrong.
    fs.mkdirSync(path.join(cwd, 'agent-cards'));
    fs.writeFileSync(path.join(cwd, 'agent-cards', 'weather.json'), '{}');
    const { code, out, err } = await runCliInProcess(['config', 'check'], cwd);
    expect(code).toBe(2);
    expect(out).toBe('');
    const lines = err.trimEnd().split('\n');
    expect(lines[0]).toBe(`lango: invalid configuration in ${path.join(cwd, 'lango.config.yaml')} (5 problems)`);
    expect(lines.slice(1).sort()).toEqual(
      [
        '  unknown key "agnet" (did you mean "agent"?)',
        '  server: unknown key "prot" (did you mean "port"?)',
        '  tools.exec.policy: Invalid option: expected one of "allow"|"deny"|"ask" (did you mean "allow"?) (got "alow")',
        '  a2a.remoteAgents[0].name: "Operator" is the name of this node\'s agent "operator"; choose another',
        '  a2a.remoteAgents[1]: exactly one of agentCardUrl, baseUrl or cardFile is required',
      ].sort(),
    );
  });

  it('reports a rule across fields beside schema problems elsewhere in the same section', () => {
    let problems: string[] = [];
    try {
      resolveConfig({
        a2a: {
          maxHops: 0,
          remoteAgents: [
            { name: 'weather', baseUrl: 'http://127.0.0.1:1' },
            { name: 'Weather', baseUrl: 'http://127.0.0.1:2' },
          ],
        },
        cluster: { heartbeatInterval: '10s', lease: '15s' },
      });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      problems = (error as ConfigError).issues;
    }
    expect(problems).toEqual([
      expect.stringMatching(/^a2a\.maxHops: /),
      'cluster.lease: 15s must be at least twice cluster.heartbeatInterval (10s)',
      'a2a.remoteAgents[1].name: "Weather" is already the name of a2a.remoteAgents[0] ("weather"); names must differ ignoring case',
    ]);
  });
});

/** The same style for what an embedder passes to createApp from JavaScript. */
describe("createApp's specialists and tools", () => {
  it('names every malformed field of a specialist row and a tool, instead of failing deep inside', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-embed-check-'));
    const base = specRows[0] as SpecRow;
    const malformed = {
      ...base,
      name: 'translator',
      instruction: 'Translate things.',
      prefixes: ['translate_'],
      keywrds: ['translate'],
    } as unknown as SpecRow;
    const tool = defineTool({
      name: 'translate_text',
      agent: 'translatr',
      description: 'Translates text.',
      parameters: z.object({ text: z.string() }),
      execute: async ({ text }) => text,
    });
    const notATool = { name: 'broken', description: 'x', parameters: { text: 'string' }, execute: 'nope' };
    try {
      const started = createApp(resolveConfig({ dataDir, tools: { browser: { enabled: false } } }), {
        logger: createMemoryLogger(),
        specialists: [malformed],
        tools: [tool, notATool as never],
      });
      await expect(started).rejects.toBeInstanceOf(ConfigError);
      const error = (await started.catch((e: unknown) => e)) as ConfigError;
      expect(error.issues).toEqual([
        'specialists[0].prefixes: Invalid input: expected record, received array',
        'specialists[0].instruction: Invalid input: expected object, received string (got "Translate things.")',
        'specialists[0]: unknown key "keywrds" (did you mean "keywords"?)',
        'tools[1].parameters: expected a zod object schema, z.object({ … })',
        'tools[1].execute: expected a function (args, ctx) => Promise<unknown> (got "nope")',
        expect.stringMatching(
          /^tools\[0\]\.agent: "translatr" is not a specialist of this node \(operator, .*translator\)$/,
        ),
      ]);
      expect(error.message).toMatch(/^invalid createApp input \(6 problems\):\n {2}specialists\[0\]\.prefixes: /);
      // Refused before anything was opened.
      expect(fs.existsSync(path.join(dataDir, 'lango.db'))).toBe(false);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
