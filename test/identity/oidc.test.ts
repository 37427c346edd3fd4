import { SignJWT, decodeJwt, generateKeyPair } from 'jose';
import { SendMessageRequest, TaskState } from '@a2a-js/sdk';
import type { ScriptedA2ARunner } from '../support/a2aRunner';
import { a2aClient, asTask, textRequest } from '../support/a2aClient';
import { rawPost, startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { startOidcIssuer, type OidcIssuer } from '../support/oidcIssuer';

/**
 * Inbound OAuth 2 / OpenID Connect (issue 26) against a real OpenID
 * provider (`oidc-provider` on 127.0.0.1): a peer calls the node with a
 * client-credentials token it fetched there, over both bindings; every
 * token that is not valid — expired, not yet valid, for another audience
 * or issuer, unsigned, HMAC-signed with the issuer's public key, signed by
 * a key the issuer does not have, tampered with — is refused with a plain
 * 401 and runs nothing.
 */

const AUDIENCE = 'https://node.example/a2a';
const PEER = { client_id: 'peer-a', client_secret: 'peer-a-secret-3c9e1f7a', scope: 'lango:librarian lango:chat' };
const STRANGER = { client_id: 'stranger', client_secret: 'stranger-secret-8b2d4e6f', scope: 'lango:chat' };
const REFUSAL = 'authentication required: present a valid bearer token or API key';

describe('inbound JWT access tokens from an OpenID provider', () => {
  let issuer: OidcIssuer;
  let node: A2ATestNode;
  const runner = () => node.runner as ScriptedA2ARunner;

  beforeAll(async () => {
    issuer = await startOidcIssuer({
      clients: [PEER, STRANGER],
      resources: { [AUDIENCE]: { scope: 'lango:librarian lango:chat', ttl: 300 } },
    });
    node = await startA2ANode({
      config: {
        a2a: {
          auth: {
            oidc: {
              issuer: issuer.url,
              audience: AUDIENCE,
              allowPrivateNetwork: true,
              scopes: {
                'lango:librarian': { description: 'search the knowledge base', grant: { toolFamilies: ['librarian'] } },
                'lango:chat': { description: 'conversation only', grant: { toolFamilies: [] } },
              },
            },
            callers: [{ name: 'peer-a', oidcSubjects: ['peer-a'], grant: { toolFamilies: ['librarian', 'exec'] } }],
          },
        },
      },
    });
  }, 40_000);
  afterAll(async () => {
    await node?.close();
    await issuer?.close();
  });

  it('runs a turn for a token the provider issued, as the caller its client id names, narrowed to its scopes', async () => {
    const token = await issuer.token(PEER, { scope: 'lango:librarian' });
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const client = await a2aClient(node.url, binding, { authorization: `Bearer ${token}` });
      const task = asTask(await client.sendMessage(textRequest(`hello over ${binding}`)));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(runner().calls.at(-1)?.principal).toEqual({
        kind: 'caller',
        id: 'peer-a',
        grant: { specialists: 'all', remoteAgents: 'all', toolFamilies: ['librarian'] },
      });
    }
  });

  it('runs a subject no caller names as oidc:<subject>, with what its scopes grant', async () => {
    const token = await issuer.token(STRANGER, { scope: 'lango:chat' });
    const client = await a2aClient(node.url, 'JSONRPC', { authorization: `Bearer ${token}` });
    await client.sendMessage(textRequest('hello from a stranger'));
    expect(runner().calls.at(-1)?.principal).toMatchObject({ id: 'oidc:stranger', grant: { toolFamilies: [] } });
  });

  it('checks the signature once per token: the key set is fetched once, not per request', async () => {
    const token = await issuer.token(PEER, { scope: 'lango:chat' });
    const keySetFetches = () => issuer.seen.filter((p) => p === '/jwks').length;
    const before = keySetFetches();
    const client = await a2aClient(node.url, 'JSONRPC', { authorization: `Bearer ${token}` });
    for (let i = 0; i < 5; i++) await client.sendMessage(textRequest(`again ${i}`));
    expect(keySetFetches()).toBe(before);
    expect(issuer.seen.filter((p) => p.startsWith('/.well-known/openid-configuration'))).toHaveLength(1);
  });

  it('declares the OpenID Connect scheme on its card, v1.0 and v0.3 alike', async () => {
    const cardOf = async (version: string) =>
      (await (
        await fetch(`${node.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': version } })
      ).json()) as Record<string, any>;
    const card = await cardOf('1.0');
    expect(card.securitySchemes.oidc).toEqual({
      openIdConnectSecurityScheme: {
        description: `A JWT access token from ${issuer.url} for ${AUDIENCE}.`,
        openIdConnectUrl: `${issuer.url}/.well-known/openid-configuration`,
      },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { oidc: {} } }]);
    expect((await cardOf('0.3')).securitySchemes.oidc).toMatchObject({
      type: 'openIdConnect',
      openIdConnectUrl: `${issuer.url}/.well-known/openid-configuration`,
    });
  });

  describe('refuses with a plain 401 and runs nothing', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const signed = (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
      new SignJWT({ sub: 'peer-a', client_id: 'peer-a', scope: 'lango:librarian', ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: issuer.kid, typ: 'at+jwt', ...header })
        .sign(issuer.privateKey);
    const valid = () => ({ iss: issuer.url, aud: AUDIENCE, iat: now(), exp: now() + 300 });
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

    const cases: Array<[string, () => Promise<string>]> = [
      ['an expired token', () => signed({ ...valid(), iat: now() - 600, exp: now() - 120 })],
      ['a token not yet valid', () => signed({ ...valid(), nbf: now() + 300 })],
      ['a token for another audience', () => signed({ ...valid(), aud: 'https://elsewhere.example' })],
      ['a token of another issuer', () => signed({ ...valid(), iss: 'http://127.0.0.1:1/other-issuer' })],
      ['an unsigned token (alg: none)', async () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(valid())}.`],
      [
        'a token HMAC-signed with the issuer public key',
        () =>
          new SignJWT({ sub: 'peer-a', ...valid() })
            .setProtectedHeader({ alg: 'HS256', kid: issuer.kid })
            .sign(new TextEncoder().encode(issuer.publicPem)),
      ],
      [
        'a token signed by a key the issuer does not have',
        async () => {
          const other = await generateKeyPair('RS256');
          return new SignJWT({ sub: 'peer-a', ...valid() })
            .setProtectedHeader({ alg: 'RS256', kid: 'not-the-issuers' })
            .sign(other.privateKey);
        },
      ],
      [
        'a tampered token (scopes widened after signing)',
        async () => {
          const [header, , signature] = (await issuer.token(PEER, { scope: 'lango:chat' })).split('.');
          const claims = decodeJwt(await issuer.token(PEER, { scope: 'lango:chat' }));
          return `${header}.${b64({ ...claims, scope: 'lango:librarian lango:chat', sub: 'owner' })}.${signature}`;
        },
      ],
    ];

    it.each(cases)('%s', async (_what, make) => {
      const token = await make();
      const runs = runner().calls.length;
      const jsonRpc = await rawPost(
        node.url,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: SendMessageRequest.toJSON(textRequest('must not run')),
        }),
        { 'Content-Type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${token}` },
      );
      expect(jsonRpc.status).toBe(401);
      expect(jsonRpc.headers.get('www-authenticate')).toBe('Bearer realm="lango"');
      expect(jsonRpc.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: REFUSAL } });
      const rest = await fetch(`${node.url}/message:send`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${token}` },
        body: JSON.stringify(SendMessageRequest.toJSON(textRequest('must not run either'))),
      });
      expect(rest.status).toBe(401);
      expect(await rest.json()).toEqual({ error: { code: 401, status: 'UNAUTHENTICATED', message: REFUSAL } });
      expect(runner().calls.length).toBe(runs);
    });

    it('fetches the key set again for an unknown key at most once per interval', async () => {
      const keySetFetches = () => issuer.seen.filter((p) => p === '/jwks').length;
      const before = keySetFetches();
      for (let i = 0; i < 3; i++) {
        const other = await generateKeyPair('RS256');
        const token = await new SignJWT({ sub: 'peer-a', ...valid() })
          .setProtectedHeader({ alg: 'RS256', kid: `rotated-${i}` })
          .sign(other.privateKey);
        const response = await rawPost(node.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask' }), {
          'Content-Type': 'application/json',
          'A2A-Version': '1.0',
          authorization: `Bearer ${token}`,
        });
        expect(response.status).toBe(401);
      }
      expect(keySetFetches() - before).toBeLessThanOrEqual(1);
    });
  });
});

describe('an issuer on loopback without allowPrivateNetwork', () => {
  it('is not reached (the outbound address policy), so its tokens are refused, and the log says which setting opens it', async () => {
    const issuer = await startOidcIssuer({
      clients: [PEER],
      resources: { [AUDIENCE]: { scope: 'lango:librarian lango:chat' } },
    });
    const node = await startA2ANode({
      config: { a2a: { auth: { oidc: { issuer: issuer.url, audience: AUDIENCE } } } },
    });
    try {
      const token = await issuer.token(PEER, { scope: 'lango:chat' });
      const response = await rawPost(
        node.url,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: SendMessageRequest.toJSON(textRequest('no')),
        }),
        { 'Content-Type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${token}` },
      );
      expect(response.status).toBe(401);
      expect(issuer.seen.filter((p) => p !== '/token')).toEqual([]);
      const warning = node.logger.records.find((r) => r.message === 'token issuer keys unavailable');
      expect(String(warning?.meta.error)).toMatch(/a2a\.auth\.oidc\.allowPrivateNetwork/);
    } finally {
      await node.close();
      await issuer.close();
    }
  }, 40_000);
});
