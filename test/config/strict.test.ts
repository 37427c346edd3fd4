import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, resolveConfig } from '../../src/config/load';
import { ConfigError } from '../../src/errors';
import { reservedAgentNames } from '../../src/orchestration/tree';

/** The problem lines of the ConfigError `fn` throws. */
function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

/** Loads `yaml` as ./lango.config.yaml of a fresh directory, as the CLI does. */
function loadYaml(yaml: string): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-config-strict-'));
  try {
    fs.writeFileSync(path.join(dir, 'lango.config.yaml'), yaml);
    return issuesOf(() => loadConfig({ env: {}, cwd: dir, reservedAgentNames: reservedAgentNames() }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// Issue 14, item 4: what fails at run time is caught when the configuration is checked.
describe('configuration strictness', () => {
  it('refuses remote agent URLs that are not http or https, echoing them', () => {
    const issues = issuesOf(() =>
      resolveConfig({
        a2a: {
          remoteAgents: [
            { name: 'a', agentCardUrl: 'htp:/peer.example/card' },
            { name: 'b', baseUrl: 'ftp://peer.example' },
            { name: 'c', baseUrl: 'https://peer.example' },
          ],
        },
      }),
    );
    expect(issues).toEqual([
      'a2a.remoteAgents[0].agentCardUrl: expected an http:// or https:// URL (got "htp:/peer.example/card")',
      'a2a.remoteAgents[1].baseUrl: expected an http:// or https:// URL (got "ftp://peer.example")',
    ]);
  });

  it('refuses two remote agents whose names differ only in case', () => {
    const issues = issuesOf(() =>
      resolveConfig({
        a2a: {
          remoteAgents: [
            { name: 'weather', baseUrl: 'http://127.0.0.1:1' },
            { name: 'Weather', baseUrl: 'http://127.0.0.1:2' },
            { name: 'weather', baseUrl: 'http://127.0.0.1:3' },
          ],
        },
      }),
    );
    expect(issues).toEqual([
      'a2a.remoteAgents[1].name: "Weather" is already the name of a2a.remoteAgents[0] ("weather"); names must differ ignoring case',
      'a2a.remoteAgents[2].name: "weather" is already the name of a2a.remoteAgents[0] ("weather"); names must differ ignoring case',
    ]);
  });

  it("refuses a remote agent named like one of the node's own agents, in any case", () => {
    const issues = loadYaml(
      [
        'a2a:',
        '  remoteAgents:',
        '    - { name: Operator, baseUrl: "http://127.0.0.1:1" }',
        '    - { name: lango-orchestrator, baseUrl: "http://127.0.0.1:2" }',
        '    - { name: helper, baseUrl: "http://127.0.0.1:3" }',
      ].join('\n'),
    );
    expect(issues).toEqual([
      'a2a.remoteAgents[0].name: "Operator" is the name of this node\'s agent "operator"; choose another',
      'a2a.remoteAgents[1].name: "lango-orchestrator" is the name of this node\'s agent "lango-orchestrator"; choose another',
    ]);
  });

  it('suggests the key an unknown key most likely meant, at any depth', () => {
    const issues = loadYaml(
      [
        'sever:',
        '  port: 1',
        'tools:',
        '  browser:',
        '    executablepath: /usr/bin/chromium',
        'a2a:',
        '  remoteAgents:',
        '    - { name: peer, baseURL: "http://127.0.0.1:1" }',
        '  zzz: 1',
      ].join('\n'),
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        'unknown key "sever" (did you mean "server"?)',
        'tools.browser: unknown key "executablepath" (did you mean "executablePath"?)',
        'a2a.remoteAgents[0]: unknown key "baseURL" (did you mean "baseUrl"?)',
        'a2a: unknown key "zzz"',
      ]),
    );
  });

  it('echoes an invalid value, but never one under a key that may hold a credential', () => {
    const issues = issuesOf(() =>
      resolveConfig({
        agent: { provider: 'opnai', maxDelegationRounds: 99 },
        logLevel: 'loud',
        a2a: { auth: { bearerTokens: [42] } },
      }),
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^agent\.provider: .*"openai".* \(got "opnai"\)$/),
        expect.stringMatching(/^agent\.maxDelegationRounds: .* \(got 99\)$/),
        expect.stringMatching(/^logLevel: .* \(got "loud"\)$/),
      ]),
    );
    const token = issues.find((line) => line.startsWith('a2a.auth.bearerTokens[0]'));
    expect(token).toBeDefined();
    expect(token).not.toContain('42');
  });

  it('points a YAML error at the line that opened an unclosed quote or bracket', () => {
    const quote = loadYaml(['server:', '  port: 4000', 'agent:', '  model: "gpt', '  multiAgent: true', ''].join('\n'));
    expect(quote).toEqual([expect.stringMatching(/^lango\.config\.yaml: line 4, column 10: Missing closing "quote/)]);
    const bracket = loadYaml(['tools:', '  exec:', '    allow: [ls, cat', '  fs: {}', ''].join('\n'));
    expect(bracket).toEqual([expect.stringMatching(/^lango\.config\.yaml: line 3, column 12: .*\]/)]);
    // An apostrophe inside a plain value opens nothing.
    const plain = loadYaml(['a2a:', "  agentDescription: don't panic", '  port: [1', ''].join('\n'));
    expect(plain).toEqual([expect.stringMatching(/^lango\.config\.yaml: line 3, /)]);
  });

  it('names the line of a syntax error the parser reports where it is', () => {
    expect(loadYaml('server:\n  port: 4000\n\thost: x\n')).toEqual([
      expect.stringMatching(/^lango\.config\.yaml: line 3, column 1: Tabs are not allowed/),
    ]);
  });
});
