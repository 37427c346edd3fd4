import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, resolveConfig } from '../../src/config/load';
import { ConfigError } from '../../src/errors';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'lango-config-'));
}

function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('gives a working offline node on defaults when no file and no API key exist', () => {
    const { config, file } = loadConfig({ env: {}, cwd: tempDir() });
    expect(file).toBeUndefined();
    expect(config.server).toEqual({ host: '127.0.0.1', port: 4000 });
    expect(config.dataDir).toBe('./.lango');
    expect(config.agent.multiAgent).toBe(true);
    expect(config.agent.provider).toBe('offline');
    expect(config.agent.maxDelegationRounds).toBe(5);
    expect(config.a2a.enabled).toBe(true);
    expect(config.a2a.baseUrl).toBeUndefined();
    expect(config.a2a.remoteAgents).toEqual([]);
  });

  it('finds ./lango.config.yaml in the working directory', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'lango.config.yaml'), 'server:\n  port: 4100\na2a:\n  agentName: hub\n');
    const { config, file } = loadConfig({ env: {}, cwd: dir });
    expect(file).toBe(path.join(dir, 'lango.config.yaml'));
    expect(config.server.port).toBe(4100);
    expect(config.a2a.agentName).toBe('hub');
  });

  it('prefers --config over LANGO_CONFIG over the default file names', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'lango.config.json'), JSON.stringify({ server: { port: 1 } }));
    fs.writeFileSync(path.join(dir, 'env.json'), JSON.stringify({ server: { port: 2 } }));
    fs.writeFileSync(path.join(dir, 'flag.json'), JSON.stringify({ server: { port: 3 } }));
    expect(loadConfig({ env: {}, cwd: dir }).config.server.port).toBe(1);
    expect(loadConfig({ env: { LANGO_CONFIG: 'env.json' }, cwd: dir }).config.server.port).toBe(2);
    expect(loadConfig({ path: 'flag.json', env: { LANGO_CONFIG: 'env.json' }, cwd: dir }).config.server.port).toBe(3);
  });

  it('substitutes ${ENV_VAR} and ${VAR:-default} inside string values', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'lango.config.yaml'), 'agent:\n  apiKey: ${MY_KEY}\n  model: ${MODEL:-gpt-test}\n');
    const { config } = loadConfig({ env: { MY_KEY: 'sk-abc123' }, cwd: dir });
    expect(config.agent.apiKey).toBe('sk-abc123');
    expect(config.agent.model).toBe('gpt-test');
    expect(config.agent.provider).toBe('openai');
  });

  it('names the key path of an unset environment variable', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'lango.config.yaml'), 'a2a:\n  auth:\n    bearerTokens: ["${HUB_TOKEN}"]\n');
    expect(issuesOf(() => loadConfig({ env: {}, cwd: dir }))).toEqual([
      'a2a.auth.bearerTokens[0]: environment variable HUB_TOKEN is not set',
    ]);
  });

  it('reports one line per bad key path', () => {
    const dir = tempDir();
    fs.writeFileSync(
      path.join(dir, 'lango.config.yaml'),
      [
        'server:',
        '  port: "eighty"',
        'agent:',
        '  maxDelegationRounds: 0',
        '  colour: blue',
        'a2a:',
        '  remoteAgents:',
        '    - name: peer',
      ].join('\n'),
    );
    const issues = issuesOf(() => loadConfig({ env: {}, cwd: dir }));
    expect(issues).toHaveLength(4);
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^server\.port: .*number/),
        expect.stringMatching(/^agent\.maxDelegationRounds: /),
        'agent: unknown key "colour"',
        'a2a.remoteAgents[0]: exactly one of agentCardUrl, baseUrl or cardFile is required',
      ]),
    );
  });

  it('says which file cannot be parsed', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'lango.config.json'), '{ "server": ');
    const issues = issuesOf(() => loadConfig({ env: {}, cwd: dir }));
    expect(issues[0]).toMatch(/^lango\.config\.json: /);
  });

  it('refuses a missing --config file by name', () => {
    expect(issuesOf(() => loadConfig({ path: 'nope.yaml', env: {}, cwd: tempDir() }))).toEqual([
      'nope.yaml: file not found',
    ]);
  });

  it('lets PORT and LOG_LEVEL from the environment override the file', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'lango.config.yaml'), 'server:\n  port: 4100\nlogLevel: warn\n');
    const { config } = loadConfig({ env: { PORT: '4200', LOG_LEVEL: 'debug' }, cwd: dir });
    expect(config.server.port).toBe(4200);
    expect(config.logLevel).toBe('debug');
    expect(issuesOf(() => loadConfig({ env: { PORT: 'x' }, cwd: dir }))).toEqual([
      'PORT: "x" is not a port number (0-65535)',
    ]);
  });

  it('chooses the openai provider when an API key is present and refuses openai without one', () => {
    expect(loadConfig({ env: { OPENAI_API_KEY: 'sk-x1234' }, cwd: tempDir() }).config.agent.provider).toBe('openai');
    expect(() => resolveConfig({ agent: { provider: 'openai' } })).toThrow(ConfigError);
    expect(resolveConfig({ agent: { provider: 'openai', baseUrl: 'http://127.0.0.1:1/v1' } }).agent.provider).toBe(
      'openai',
    );
  });

  it('takes the vault master key from LANGO_MASTER_KEY unless the file sets one', () => {
    const dir = tempDir();
    expect(loadConfig({ env: { LANGO_MASTER_KEY: 'from-env-key' }, cwd: dir }).config.security.masterKey).toBe(
      'from-env-key',
    );
    fs.writeFileSync(path.join(dir, 'lango.config.yaml'), 'security:\n  masterKey: from-file-key\n');
    expect(loadConfig({ env: { LANGO_MASTER_KEY: 'from-env-key' }, cwd: dir }).config.security.masterKey).toBe(
      'from-file-key',
    );
  });

  it('returns a frozen configuration', () => {
    const config = resolveConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.server)).toBe(true);
  });
});
