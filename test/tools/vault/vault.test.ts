import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { cryptoFamily, secretsFamily } from '../../../src/tools/vault/family';
import { execFamily } from '../../../src/tools/operator/family';
import { loadMasterKey, MASTER_KEY_FILE } from '../../../src/vault/masterKey';
import { byName, callTool, tempDir } from '../operator/context';
import { familyDeps } from '../operator/deps';

const SECRET = 'sk-live-9f8e7d6c5b4a-very-secret';

describe('vault master key', () => {
  it('creates a 0600 key file in the data directory on first use and reuses it', () => {
    const { dir, cleanup } = tempDir();
    try {
      const first = loadMasterKey({ dataDir: dir });
      expect(first.source).toBe('generated');
      const file = path.join(dir, MASTER_KEY_FILE);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const second = loadMasterKey({ dataDir: dir });
      expect(second.source).toBe('file');
      expect(second.key.equals(first.key)).toBe(true);
    } finally {
      cleanup();
    }
  });

  it('refuses a key file that others can read', () => {
    const { dir, cleanup } = tempDir();
    try {
      loadMasterKey({ dataDir: dir });
      fs.chmodSync(path.join(dir, MASTER_KEY_FILE), 0o644);
      expect(() => loadMasterKey({ dataDir: dir })).toThrow(
        'is readable or writable by others (mode 644); refusing to start',
      );
    } finally {
      cleanup();
    }
  });

  it('takes security.masterKey as hex or as a passphrase, without writing a key file', () => {
    const { dir, cleanup } = tempDir();
    try {
      const hex = 'ab'.repeat(32);
      expect(loadMasterKey({ dataDir: dir, masterKey: hex }).key.toString('hex')).toBe(hex);
      const a = loadMasterKey({ dataDir: dir, masterKey: 'correct horse battery staple' });
      const b = loadMasterKey({ dataDir: dir, masterKey: 'correct horse battery staple' });
      expect(a.source).toBe('config');
      expect(a.key).toHaveLength(32);
      expect(a.key.equals(b.key)).toBe(true);
      expect(fs.existsSync(path.join(dir, MASTER_KEY_FILE))).toBe(false);
      expect(() => loadMasterKey({ dataDir: dir, masterKey: 'short' })).toThrow('too short');
    } finally {
      cleanup();
    }
  });

  it('marks the vault broken when the master key changed since the vault was created', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const deps = await familyDeps(dir, { security: { masterKey: 'first passphrase' } });
      await secretsFamily.create(deps);
      expect(deps.secrets.redactText('key: first passphrase')).toBe('key: [REDACTED]');
      await deps.close();
      const again = await familyDeps(dir, { security: { masterKey: 'second passphrase' } });
      expect(() => secretsFamily.create(again)).toThrow('does not match');
      await again.close();
    } finally {
      cleanup();
    }
  });
});

// One data folder per test, reopened where a test restarts the node.
describe('vault family tools', () => {
  let dir: string;
  let cleanup: () => void;
  let deps: Awaited<ReturnType<typeof familyDeps>>;
  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    deps = await familyDeps(dir);
  });
  afterEach(async () => {
    await deps.close();
    cleanup();
  });

  describe('crypto tools', () => {
    it('hashes with a known vector', async () => {
      const tools = (await cryptoFamily.create(deps)).tools;
      expect(await callTool(byName(tools, 'crypto_hash'), { text: 'abc' })).toEqual({
        algorithm: 'sha256',
        digest: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      });
      const b64 = await callTool(byName(tools, 'crypto_hash'), {
        text: 'abc',
        algorithm: 'sha512',
        encoding: 'base64',
      });
      expect(b64.digest).toBe(crypto.createHash('sha512').update('abc').digest('base64'));
    });

    it('encrypts with AES-256-GCM, decrypts after a restart, and rejects tampered ciphertext', async () => {
      const tools = (await cryptoFamily.create(deps)).tools;
      const { ciphertext } = await callTool(byName(tools, 'crypto_encrypt'), { text: 'meet at noon' });
      expect(ciphertext).toMatch(/^v1\./);
      expect(ciphertext).not.toContain('noon');
      await deps.close();
      deps = await familyDeps(dir);
      const reopened = (await cryptoFamily.create(deps)).tools;
      expect(await callTool(byName(reopened, 'crypto_decrypt'), { ciphertext })).toEqual({ text: 'meet at noon' });
      const raw = Buffer.from(ciphertext.slice(3), 'base64');
      raw[raw.length - 1] ^= 1;
      await expect(
        callTool(byName(reopened, 'crypto_decrypt'), { ciphertext: `v1.${raw.toString('base64')}` }),
      ).rejects.toThrow('could not be decrypted');
    });

    it('signs with the node Ed25519 key, which survives a restart, and verifies', async () => {
      const tools = (await cryptoFamily.create(deps)).tools;
      const signed = await callTool(byName(tools, 'crypto_sign'), { message: 'hello' });
      expect(signed.algorithm).toBe('Ed25519');
      expect(crypto.verify(null, Buffer.from('hello'), signed.publicKey, Buffer.from(signed.signature, 'base64'))).toBe(
        true,
      );
      await deps.close();
      deps = await familyDeps(dir);
      const again = (await cryptoFamily.create(deps)).tools;
      const verify = byName(again, 'crypto_verify');
      expect(await callTool(verify, { message: 'hello', signature: signed.signature })).toEqual({
        algorithm: 'Ed25519',
        valid: true,
      });
      expect((await callTool(verify, { message: 'hellO', signature: signed.signature })).valid).toBe(false);
      const other = crypto.generateKeyPairSync('ed25519');
      const otherPem = other.publicKey.export({ type: 'spki', format: 'pem' }).toString();
      expect(
        (await callTool(verify, { message: 'hello', signature: signed.signature, publicKey: otherPem })).valid,
      ).toBe(false);
      await expect(callTool(verify, { message: 'x', signature: 'AA==', publicKey: 'not a key' })).rejects.toThrow(
        'not a valid PEM',
      );
    });

    it('lists keys with their public half only, the private half sealed at rest', async () => {
      const tools = (await cryptoFamily.create(deps)).tools;
      const { keys } = await callTool(byName(tools, 'crypto_keys'), {});
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({ name: 'node', algorithm: 'Ed25519' });
      expect(JSON.stringify(keys)).not.toContain('PRIVATE');
      const row = deps.storage.db.prepare('SELECT private_key FROM vault_keys').get() as { private_key: string };
      expect(row.private_key).toMatch(/^v1\./);
    });
  });

  describe('secrets tools', () => {
    it('stores a secret encrypted at rest and never returns its value', async () => {
      const tools = (await secretsFamily.create(deps)).tools;
      const results = [
        await callTool(byName(tools, 'secrets_store'), { name: 'API_TOKEN', value: SECRET }),
        await callTool(byName(tools, 'secrets_get'), { name: 'API_TOKEN' }),
        await callTool(byName(tools, 'secrets_list'), {}),
      ];
      expect(results[0]).toMatchObject({
        name: 'API_TOKEN',
        stored: true,
        created: true,
        reference: '{{secret:API_TOKEN}}',
      });
      expect(results[1]).toMatchObject({ name: 'API_TOKEN', reference: '{{secret:API_TOKEN}}' });
      expect(results[2].secrets.map((s: { name: string }) => s.name)).toEqual(['API_TOKEN']);
      expect(JSON.stringify(results)).not.toContain(SECRET);
      deps.storage.db.pragma('wal_checkpoint(TRUNCATE)');
      for (const file of fs.readdirSync(dir).filter((f) => f.startsWith('lango.db'))) {
        expect(fs.readFileSync(path.join(dir, file)).includes(SECRET)).toBe(false);
      }
      expect(JSON.stringify(deps.logger.records)).not.toContain(SECRET);
    });

    it('resolves a reference only inside exec: the process gets the value, the model sees it masked', async () => {
      await callTool(byName((await secretsFamily.create(deps)).tools, 'secrets_store'), {
        name: 'API_TOKEN',
        value: SECRET,
      });
      const shell = byName((await execFamily.create(deps)).tools, 'exec_shell');
      const result = await callTool(shell, {
        command: 'printf %s "{{secret:API_TOKEN}}" > token.txt; echo "token={{secret:API_TOKEN}}"',
      });
      expect(fs.readFileSync(path.join(dir, 'workspace', 'token.txt'), 'utf8')).toBe(SECRET);
      expect(result.stdout).toBe('token=[REDACTED]\n');
      expect(JSON.stringify(result)).not.toContain(SECRET);
      expect(JSON.stringify(deps.logger.records)).not.toContain(SECRET);
      await expect(callTool(shell, { command: 'echo {{secret:MISSING}}' })).rejects.toThrow('unknown secret "MISSING"');
    });

    it('masks stored values in logs after a restart, before any tool runs', async () => {
      await callTool(byName((await secretsFamily.create(deps)).tools, 'secrets_store'), {
        name: 'API_TOKEN',
        value: SECRET,
      });
      await deps.close();
      deps = await familyDeps(dir);
      await secretsFamily.create(deps);
      expect(deps.secrets.redactText(`header ${SECRET}`)).toBe('header [REDACTED]');
    });

    it('replaces, deletes and refuses bad or unknown names', async () => {
      const tools = (await secretsFamily.create(deps)).tools;
      await callTool(byName(tools, 'secrets_store'), { name: 'K', value: 'value-one' });
      expect((await callTool(byName(tools, 'secrets_store'), { name: 'K', value: 'value-two' })).created).toBe(false);
      expect(await callTool(byName(tools, 'secrets_delete'), { name: 'K' })).toEqual({ name: 'K', deleted: true });
      await expect(callTool(byName(tools, 'secrets_get'), { name: 'K' })).rejects.toThrow('unknown secret "K"');
      await expect(callTool(byName(tools, 'secrets_delete'), { name: 'K' })).rejects.toThrow('unknown secret');
      await expect(callTool(byName(tools, 'secrets_store'), { name: '1bad name', value: 'x' })).rejects.toThrow(
        'invalid secret name',
      );
    });

    it('refuses secret references in exec when the vault is off', async () => {
      const off = await familyDeps(tempDir().dir, { security: { enabled: false } });
      try {
        const shell = byName((await execFamily.create(off)).tools, 'exec_shell');
        await expect(callTool(shell, { command: 'echo {{secret:X}}' })).rejects.toThrow('security.enabled: false');
        expect(secretsFamily.enabled(off.config)).toBe(false);
        expect(cryptoFamily.enabled(off.config)).toBe(false);
      } finally {
        await off.close();
        fs.rmSync(off.dataDir, { recursive: true, force: true });
      }
    });
  });
});
