import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import type { RemoteAgent } from '../../src/agent/agent';
import { loadRemoteAgents } from '../../src/federation/loadRemoteAgents';
import { createMemoryLogger } from '../../src/log/logger';
import { SecretRegistry } from '../../src/log/redact';
import type { ScriptedA2ARunner } from '../support/a2aRunner';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { baseOptions, drain, entries } from '../support/federationRun';
import { startOidcIssuer, type OidcIssuer } from '../support/oidcIssuer';

/**
 * Outbound OAuth 2 client credentials (issue 26): a remote agent entry with
 * `auth: { type: oauth2 }` fetches its token from a real OpenID provider on
 * first use, keeps it while it is valid, fetches another once when the
 * peer answers 401, and never lets it into a log line. The peer is a lango
 * A2A server that itself checks the token against the same provider, behind
 * a front that can revoke a token (answer 401 for it).
 */

const AUDIENCE = 'https://calendar.example/a2a';
const CLIENT = { client_id: 'node-a', client_secret: 'node-a-secret-7d1e9c3b5a', scope: 'lango:delegate' };

describe('a remote agent reached with OAuth 2 client credentials', () => {
  let issuer: OidcIssuer;
  let peer: A2ATestNode;
  let front: http.Server;
  let frontUrl: string;
  const revoked = new Set<string>();
  let refuseAll = false;
  const presented: string[] = [];
  let dispatcher: Agent;

  beforeAll(async () => {
    issuer = await startOidcIssuer({ clients: [CLIENT], resources: { [AUDIENCE]: { scope: 'lango:delegate' } } });
    // The front answers 401 for a revoked token (or every call), and hands everything else to the peer.
    let peerApp: http.RequestListener = () => undefined;
    front = http.createServer((req, res) => {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (req.method === 'POST') presented.push(token);
      if (req.method === 'POST' && (refuseAll || revoked.has(token))) {
        res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
        return;
      }
      peerApp(req, res);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
    peer = await startA2ANode({
      config: {
        a2a: {
          baseUrl: frontUrl,
          auth: {
            oidc: { issuer: issuer.url, audience: AUDIENCE, allowPrivateNetwork: true },
            callers: [{ name: 'node-a', oidcSubjects: ['node-a'] }],
          },
        },
      },
    });
    peerApp = peer.a2a.app;
    dispatcher = new Agent();
  }, 40_000);
  afterAll(async () => {
    await dispatcher?.destroy();
    front?.closeAllConnections();
    await new Promise<void>((resolve) => front?.close(() => resolve()));
    await peer?.close();
    await issuer?.close();
  });

  const tokenRequests = () => issuer.seen.filter((p) => p === '/token').length;

  async function calendar(clientSecret = CLIENT.client_secret) {
    const secrets = new SecretRegistry();
    const logger = createMemoryLogger();
    const { agents, skipped } = await loadRemoteAgents({
      ...baseOptions(logger),
      dispatcher,
      secrets,
      entries: entries({
        name: 'calendar',
        baseUrl: frontUrl,
        auth: {
          type: 'oauth2',
          tokenUrl: `${issuer.url}/token`,
          clientId: CLIENT.client_id,
          clientSecret,
          scopes: ['lango:delegate'],
          audience: AUDIENCE,
        },
      }),
    });
    expect(skipped).toEqual([]);
    return { agent: agents[0] as RemoteAgent, secrets, logger };
  }

  it('fetches the token on first use and keeps it for the next calls', async () => {
    const before = tokenRequests();
    const { agent, secrets, logger } = await calendar();
    // Loading the card asks for no token.
    expect(tokenRequests()).toBe(before);
    for (const text of ['first', 'second']) {
      const { outcome } = await drain(agent, { text });
      expect(outcome).toMatchObject({ status: 'completed', text: `echo: ${text}` });
    }
    expect(tokenRequests()).toBe(before + 1);
    const calls = (peer.runner as ScriptedA2ARunner).calls;
    expect(calls.at(-1)?.principal.id).toBe('node-a');
    // The token is the redactor's: a log line or answer echoing it shows it masked.
    const token = presented.at(-1)!;
    expect(token).toMatch(/^eyJ/);
    expect(secrets.redactText(`Bearer ${token}`)).not.toContain(token);
    expect(JSON.stringify(logger.records)).not.toContain(token);
  });

  it('fetches a new token once when the peer answers 401, and the call goes through', async () => {
    const { agent } = await calendar();
    await drain(agent, { text: 'warm up' });
    const before = tokenRequests();
    revoked.add(presented.at(-1)!);
    const { outcome } = await drain(agent, { text: 'after revocation' });
    expect(outcome).toMatchObject({ status: 'completed', text: 'echo: after revocation' });
    expect(tokenRequests()).toBe(before + 1);
    expect(revoked.has(presented.at(-1)!)).toBe(false);
  });

  it('gives up after one renewal when the peer keeps answering 401', async () => {
    const { agent } = await calendar();
    const before = { tokens: tokenRequests(), posts: presented.length };
    refuseAll = true;
    try {
      const { outcome } = await drain(agent, { text: 'refused' });
      expect(outcome).toMatchObject({ status: 'failed', reason: expect.stringContaining('HTTP 401') });
      expect(presented.length - before.posts).toBe(2);
      expect(tokenRequests() - before.tokens).toBe(2);
    } finally {
      refuseAll = false;
    }
  });

  it("names the token endpoint's refusal, without the client secret", async () => {
    const { agent } = await calendar('not-the-secret-0000');
    const { outcome } = await drain(agent, { text: 'no token for me' });
    expect(outcome).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(
        /OAuth token request to http:\/\/127\.0\.0\.1:\d+ failed: HTTP 401 \(invalid_client\)/,
      ),
    });
    expect(JSON.stringify(outcome)).not.toContain('not-the-secret-0000');
  });
});
