import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/main';
import { clusterSettings, describeStorageUrl, storagePassword } from '../../src/config/cluster';
import { resolveConfig } from '../../src/config/load';
import { ConfigError } from '../../src/errors';

const PG = 'postgres://lango:s3cret-pass@db.internal:5432/lango';
const KEY = 'a'.repeat(64);

function problemsOf(input: unknown): string[] {
  try {
    resolveConfig(input);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
}

describe('storage and cluster configuration', () => {
  it('defaults to SQLite, a replica id of host name and pid, and a lease of at most 15 s', () => {
    const config = resolveConfig({});
    expect(config.storage.url).toBeUndefined();
    const settings = clusterSettings(config);
    expect(settings.replicaId).toBe(`${os.hostname()}:${process.pid}`);
    expect(settings.leaseMs).toBeLessThanOrEqual(15_000);
    expect(settings.heartbeatMs * 2).toBeLessThanOrEqual(settings.leaseMs);
    expect(clusterSettings(resolveConfig({ cluster: { replicaId: 'r-1' } })).replicaId).toBe('r-1');
  });

  it('refuses a cluster whose vault key would be a local key file, a lease under two heartbeats, a non-postgres URL', () => {
    expect(problemsOf({ storage: { url: PG } })).toEqual([expect.stringMatching(/^security\.masterKey: required/)]);
    expect(problemsOf({ storage: { url: PG }, security: { masterKey: KEY } })).toEqual([]);
    expect(problemsOf({ storage: { url: PG }, security: { enabled: false } })).toEqual([]);
    expect(problemsOf({ cluster: { heartbeatInterval: '10s', lease: '15s' } })).toEqual([
      expect.stringMatching(/^cluster\.lease: 15s must be at least twice/),
    ]);
    expect(problemsOf({ storage: { url: 'mysql://x/y' } })).toEqual([expect.stringMatching(/^storage\.url: /)]);
    expect(problemsOf({ cluster: { lease: 'soon' } })).toEqual([expect.stringMatching(/^cluster\.lease: /)]);
  });

  it('never shows the storage password: described without it, registered as a secret', () => {
    expect(describeStorageUrl(PG)).toBe('postgres://lango@db.internal:5432/lango');
    expect(storagePassword(PG)).toBe('s3cret-pass');
    expect(storagePassword('postgres://db/lango')).toBeUndefined();
  });
});

describe('lango config check and lango migrate', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-cluster-'));
  });
  afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

  async function lango(argv: string[], env: NodeJS.ProcessEnv = {}) {
    let out = '';
    let err = '';
    const code = await runCli(argv, {
      io: { out: (s) => void (out += s), err: (s) => void (err += s) },
      env: { LOG_LEVEL: 'error', ...env },
      cwd,
      stopSignal: new Promise(() => {}),
    });
    return { code, out, err };
  }

  it('exits 2 naming security.masterKey for a cluster without a shared key, and warns about unshared folders', async () => {
    fs.writeFileSync(path.join(cwd, 'lango.config.yaml'), `storage:\n  url: ${PG}\n`);
    const refused = await lango(['config', 'check']);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('security.masterKey: required with storage.url');
    expect(refused.err + refused.out).not.toContain('s3cret-pass');

    const ok = await lango(['config', 'check'], { LANGO_MASTER_KEY: KEY });
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('storage PostgreSQL postgres://lango@db.internal:5432/lango as replica ');
    expect(ok.err).toContain('warning: tools.fs.root: unset');
    expect(ok.err).toContain('warning: tools.skills:');
    expect(ok.out + ok.err).not.toContain('s3cret-pass');
  });

  it('migrate applies the SQLite schema when no storage.url is set', async () => {
    const { code, out } = await lango(['migrate']);
    expect(code).toBe(0);
    expect(out).toContain('schema up to date');
    expect(fs.existsSync(path.join(cwd, '.lango', 'lango.db'))).toBe(true);
  });
});
