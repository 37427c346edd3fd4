import fs from 'node:fs';
import { cliWorkdir, runCliInProcess, startServe, type CliProcess } from '../support/cliProcess';

jest.setTimeout(90_000);

const OWNER_TOKEN = 'owner-token-0123456789';
const GUEST_TOKEN = 'guest-token-0123456789';

/** Issue 28, item 2: the node's reports for the CLI are its owner's only. */
describe("the node's owner-only report routes", () => {
  let cwd: string;
  let serve: CliProcess | undefined;
  let url: string;
  beforeAll(async () => {
    cwd = cliWorkdir(
      `a2a:\n  auth:\n    bearerTokens: ["${GUEST_TOKEN}"]\n` +
        `    callers:\n      - { name: admin, owner: true, bearerTokens: ["${OWNER_TOKEN}"] }\n`,
    );
    const started = await startServe(cwd);
    serve = started.serve;
    url = started.url;
  });
  afterAll(async () => {
    await serve?.stop();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  const get = (path: string, token?: string) =>
    fetch(`${url}/${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

  it('refuses a caller without a credential (401) and one that is not the owner (403)', async () => {
    for (const path of ['node/tools', 'node/doctor', 'node/agents']) {
      const anonymous = await get(path);
      expect([path, anonymous.status, anonymous.headers.get('www-authenticate')]).toEqual([
        path,
        401,
        'Bearer realm="lango"',
      ]);
      const guest = await get(path, GUEST_TOKEN);
      const message = ((await guest.json()) as { error: { message: string } }).error.message;
      expect([path, guest.status, message]).toEqual([
        path,
        403,
        expect.stringMatching(/^only the node owner may look \(you are bearer:[0-9a-f]{16}\)$/),
      ]);
    }
    const owner = await get('node/tools', OWNER_TOKEN);
    expect(owner.status).toBe(200);
    expect(((await owner.json()) as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain('exec_shell');
  });

  it('the CLI on the folder presents the owner credential of its configuration', async () => {
    const tools = await runCliInProcess(['tools', 'crypto_hash'], cwd);
    expect([tools.code, tools.err, tools.out.split('\n')[0]]).toEqual([0, '', 'crypto_hash  → vault']);
    const doctor = await runCliInProcess(['doctor'], cwd);
    expect(doctor.code).toBe(0);
    expect(doctor.out).toMatch(/^on +exec +→ operator/m);
  });
});
