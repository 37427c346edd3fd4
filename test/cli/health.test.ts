import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCliInProcess } from '../support/cliProcess';

const lango = runCliInProcess;

// Issue 14, item 5: a missing specialist says why; doctor and agents --check fail only on what was asked for.
describe('doctor and agents on a node missing something', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-cli-health-'));
  });
  afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

  const write = (yaml: string) => fs.writeFileSync(path.join(cwd, 'lango.config.yaml'), yaml);

  it('agents names the navigator that is not running and why; doctor exits 1 for the configured browser', async () => {
    write('tools:\n  browser:\n    executablePath: /nonexistent/chromium\n');
    const agents = await lango(['agents'], cwd);
    expect(agents.code).toBe(0);
    expect(agents.out).toMatch(
      /\nnot running:\n {2}browser \(navigator\): broken: no usable browser: no browser at \/nonexistent\/chromium/,
    );
    const doctor = await lango(['doctor'], cwd);
    expect(doctor.code).toBe(1);
    expect(doctor.out).toMatch(/^broken +browser +→ navigator +no usable browser/m);
    expect(doctor.out).toContain('broken: browser (configured but unusable)');
  });

  it('doctor exits 0 when a family is only off by config', async () => {
    write('tools:\n  browser:\n    enabled: false\npayment:\n  enabled: false\n');
    const doctor = await lango(['doctor'], cwd);
    expect(doctor.code).toBe(0);
    expect(doctor.out).toMatch(/^off +browser +→ navigator +disabled by config$/m);
    expect((await lango(['agents'], cwd)).out).toContain('  browser (navigator): disabled by config');
  });

  it('agents --check exits 1 when remote agents are configured but A2A is off', async () => {
    write(
      'tools:\n  browser:\n    enabled: false\na2a:\n  enabled: false\n  remoteAgents:\n' +
        '    - { name: peer, baseUrl: "http://127.0.0.1:9" }\n',
    );
    const { code, err } = await lango(['agents', '--check'], cwd);
    expect(code).toBe(1);
    expect(err).toContain('1 remote agent(s) configured, but a2a.enabled is false: none is used');
  });
});
