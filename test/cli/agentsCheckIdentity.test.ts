import fs from 'node:fs';
import { AUDIENCE, CLIENTS, networkAuth, networkNodes, startNetworkIssuer } from '../support/delegationNetwork';
import type { NetworkNode } from '../support/delegationNetwork';
import { cliWorkdir, runCliInProcess } from '../support/cliProcess';
import type { OidcIssuer } from '../support/oidcIssuer';

/**
 * `lango agents --check` meets identity (issue 33): for a remote called on
 * behalf of callers, whether on-behalf-of works (a token exchange of the
 * node's own token at the remote's issuer succeeded), which skills the
 * remote offers; a remote whose exchange fails makes the check fail (exit 1).
 */
describe('agents --check for on-behalf-of remotes', () => {
  let issuer: OidcIssuer;
  const nodes = networkNodes();
  let b: NetworkNode;
  const dirs: string[] = [];

  beforeAll(async () => {
    issuer = await startNetworkIssuer();
    b = await nodes.start('node-b', { auth: networkAuth(issuer, AUDIENCE.b, { actors: ['node-a'] }) });
  }, 60_000);
  afterAll(async () => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    await nodes.closeAll();
    await issuer?.close();
  });

  /** A data folder whose node accepts tokens of the issuer for A and calls B on their behalf with `secret`. */
  const workdir = (secret: string) => {
    const cwd = cliWorkdir(
      [
        'a2a:',
        '  auth:',
        `    oidc: { issuer: "${issuer.url}", audience: "${AUDIENCE.a}", allowPrivateNetwork: true }`,
        '  remoteAgents:',
        `    - name: node-b`,
        `      baseUrl: "${b.url}"`,
        `      auth: { type: tokenExchange, tokenUrl: "${issuer.url}/token", clientId: node-a, clientSecret: "${secret}", audience: "${AUDIENCE.b}", onBehalfOf: required }`,
        '',
      ].join('\n'),
    );
    dirs.push(cwd);
    return cwd;
  };

  it("says on-behalf-of works and lists the remote's skills", async () => {
    const { code, out } = await runCliInProcess(['agents', '--check'], workdir(CLIENTS.a.client_secret));
    expect(out).toMatch(/^ {2}node-b +healthy +http:\/\/127\.0\.0\.1:\d+\//m);
    expect(out).toMatch(/^ +skills: lango-orchestrator, .*librarian/m);
    expect(out).toMatch(/^ +on-behalf-of \(required\): works \(token exchange succeeded with the node's own token\)$/m);
    expect(code).toBe(0);
  }, 60_000);

  it('fails the check, naming why, when the exchange is refused', async () => {
    const { code, out } = await runCliInProcess(['agents', '--check'], workdir('not-the-secret-00'));
    expect(out).toMatch(/^ +on-behalf-of \(required\): FAILS: .*failed: HTTP 401 \(invalid_client\)$/m);
    expect(out).not.toContain('not-the-secret-00');
    expect(code).toBe(1);
    const json = JSON.parse((await runCliInProcess(['agents', '--json', '--check'], dirs.at(-1)!)).out) as {
      remoteAgents: Array<{ name: string; onBehalfOf: { ok: boolean }; skills: string[] }>;
    };
    expect(json.remoteAgents[0]).toMatchObject({ name: 'node-b', onBehalfOf: { ok: false } });
  }, 60_000);
});
