import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCliInProcess } from '../support/cliProcess';

const lango = runCliInProcess;

describe('lango tools', () => {
  let cwd: string;
  beforeAll(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-cli-tools-'));
    fs.writeFileSync(path.join(cwd, 'lango.config.yaml'), 'tools:\n  browser:\n    enabled: false\n');
  });
  afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it("prints one tool's owner, description and arguments", async () => {
    const { code, out } = await lango(['tools', 'crypto_hash'], cwd);
    expect(code).toBe(0);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe('crypto_hash  → vault');
    expect(lines[1]).toMatch(/^ {2}Hashes text/);
    expect(lines).toContain('    text (required, string)');
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}algorithm \(optional, "sha256" \| "sha512" \| /));
  });

  it('lists every tool with its owner as JSON', async () => {
    const { code, out } = await lango(['tools', '--json'], cwd);
    expect(code).toBe(0);
    const tools = JSON.parse(out) as { name: string; owner: string | null; arguments: { name: string }[] }[];
    const owners = Object.fromEntries(tools.map((t) => [t.name, t.owner]));
    expect(owners).toMatchObject({ exec_shell: 'operator', crypto_hash: 'vault', cron_add: 'automator' });
    expect(tools.find((t) => t.name === 'fs_read')?.arguments.map((a) => a.name)).toContain('path');
    expect(tools.some((t) => t.owner === null)).toBe(false);
  });

  it('exits 2 for an unknown tool, suggesting the ones of the same prefix', async () => {
    const { code, out, err } = await lango(['tools', 'crypto_hsh'], cwd);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toMatch(/^lango: no tool named "crypto_hsh" \(did you mean crypto_hash, .*\?\)/);
  });
});
