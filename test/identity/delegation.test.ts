import { SignJWT, decodeJwt, generateKeyPair } from 'jose';
import { TaskState } from '@a2a-js/sdk';
import type { ScriptedA2ARunner } from '../support/a2aRunner';
import { a2aClient, asTask, textRequest } from '../support/a2aClient';
import { rawPost, startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { startOidcIssuer, type OidcIssuer } from '../support/oidcIssuer';
import { actorChain, createDelegation } from '../../src/identity/delegation';
import { createCallers } from '../../src/identity/callers';
import { LangoConfig } from '../../src/config/schema';
import { DEFAULT_PEER_GRANT } from '../../src/tools/families';

/**
 * Delegated tokens inbound (issue 33) against a real OpenID provider whose
 * token exchange (RFC 8693) is registered with the provider's own extension
 * API: a token node-a exchanged for caller x runs as x, narrowed to what
 * node-a may do, with the chain on its principal; every other delegated
 * token — an actor not configured, a chain too deep or malformed or of
 * another issuer, one the issuer never signed, one for the owner — is the
 * plain 401 of any token that is not valid, and runs nothing.
 */

const AUD_A = 'https://node-a.example/a2a';
const AUD_B = 'https://node-b.example/a2a';
const SCOPES = 'lango:chat lango:librarian';
const X = { client_id: 'x', client_secret: 'x-secret-5d1e8a2b', scope: SCOPES };
const NODE_A = { client_id: 'node-a', client_secret: 'node-a-secret-7c3f9e1d', scope: SCOPES };
const STRANGER = { client_id: 'node-z', client_secret: 'node-z-secret-2b8d6f4a', scope: SCOPES };
const BOSS = { client_id: 'boss', client_secret: 'boss-secret-9a4c2e7f', scope: SCOPES };
const REFUSAL = 'authentication required: present a valid bearer token or API key';

describe('delegated tokens inbound', () => {
  let issuer: OidcIssuer;
  let node: A2ATestNode;
  const runner = () => node.runner as ScriptedA2ARunner;
  const exchanged = async (actor: typeof NODE_A, subject: typeof X) => {
    const token = await issuer.token(subject, { resource: AUD_A });
    const answer = await issuer.exchange(actor, token, AUD_B);
    if (answer.status !== 200) throw new Error(`exchange refused: ${JSON.stringify(answer.body)}`);
    return answer.body.access_token as string;
  };

  beforeAll(async () => {
    issuer = await startOidcIssuer({
      clients: [X, NODE_A, STRANGER, BOSS],
      resources: { [AUD_A]: { scope: SCOPES }, [AUD_B]: { scope: SCOPES } },
      exchangers: { 'node-a': AUD_A, 'node-z': AUD_A },
    });
    node = await startA2ANode({
      config: {
        a2a: {
          auth: {
            oidc: { issuer: issuer.url, audience: AUD_B, allowPrivateNetwork: true },
            delegation: { actors: ['node-a', 'boss'], maxDepth: 2 },
            callers: [
              { name: 'caller-x', oidcSubjects: ['x'], grant: { toolFamilies: ['librarian', 'fs'] } },
              { name: 'node-a', oidcSubjects: ['node-a'], grant: { toolFamilies: ['librarian', 'crypto'] } },
              { name: 'boss', oidcSubjects: ['boss'], owner: true },
            ],
          },
        },
      },
    });
  }, 40_000);
  afterAll(async () => {
    await node?.close();
    await issuer?.close();
  });

  it("runs a token node-a exchanged for x as x, narrowed to node-a's reach, with the chain and the token beside it", async () => {
    const token = await exchanged(NODE_A, X);
    expect(decodeJwt(token)).toMatchObject({ sub: 'x', client_id: 'node-a', act: { sub: 'node-a' }, aud: AUD_B });
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const client = await a2aClient(node.url, binding, { authorization: `Bearer ${token}` });
      const task = asTask(await client.sendMessage(textRequest(`for x over ${binding}`)));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const call = runner().calls.at(-1)!;
      expect(call.principal).toEqual({
        kind: 'caller',
        id: 'caller-x',
        grant: { specialists: 'all', remoteAgents: 'all', toolFamilies: ['librarian'] },
        actors: ['node-a'],
      });
      // Carried beside the principal for the turn's own delegations, never inside it.
      expect(call.subjectToken?.reveal()).toBe(token);
      expect(JSON.stringify(call)).not.toContain(token);
    }
  });

  describe('refuses with a plain 401 and runs nothing', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const signed = (claims: Record<string, unknown>) =>
      new SignJWT({ sub: 'x', client_id: 'node-a', scope: SCOPES, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: issuer.kid, typ: 'at+jwt' })
        .sign(issuer.privateKey);
    const valid = () => ({ iss: issuer.url, aud: AUD_B, iat: now(), exp: now() + 300 });

    const cases: Array<[string, () => Promise<string>]> = [
      ['a token exchanged by an actor not configured', () => exchanged(STRANGER, X)],
      [
        'a chain longer than maxDepth',
        () => signed({ ...valid(), act: { sub: 'node-a', act: { sub: 'node-a', act: { sub: 'node-a' } } } }),
      ],
      [
        'a chain with an unknown actor inside it',
        () => signed({ ...valid(), act: { sub: 'node-a', act: { sub: 'mallory' } } }),
      ],
      ['an act claim that is not an object', () => signed({ ...valid(), act: 'node-a' })],
      ['an act claim without a subject', () => signed({ ...valid(), act: { client_id: 'node-a' } })],
      [
        'an actor of another issuer',
        () => signed({ ...valid(), act: { sub: 'node-a', iss: 'https://other.example' } }),
      ],
      ['a delegated token for the owner', () => signed({ ...valid(), sub: 'boss', act: { sub: 'node-a' } })],
      [
        'a forged chain (signed by a key the issuer does not have)',
        async () => {
          const other = await generateKeyPair('RS256');
          return new SignJWT({ sub: 'x', ...valid(), act: { sub: 'node-a' } })
            .setProtectedHeader({ alg: 'RS256', kid: issuer.kid })
            .sign(other.privateKey);
        },
      ],
      [
        'an expired delegated token',
        () => signed({ ...valid(), iat: now() - 600, exp: now() - 120, act: { sub: 'node-a' } }),
      ],
    ];

    it.each(cases)('%s', async (_name, make) => {
      const token = await make();
      const before = runner().calls.length;
      const answer = await rawPost(
        node.url,
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: textRequest('forged') }),
        { 'Content-Type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${token}` },
      );
      expect(answer.status).toBe(401);
      expect(answer.body.error.message).toBe(REFUSAL);
      expect(runner().calls.length).toBe(before);
    });
  });

  it('refuses to exchange an expired subject token (the issuer says invalid_grant)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ sub: 'x', client_id: 'x', scope: SCOPES })
      .setProtectedHeader({ alg: 'RS256', kid: issuer.kid, typ: 'at+jwt' })
      .setIssuer(issuer.url)
      .setAudience(AUD_A)
      .setIssuedAt(now - 600)
      .setExpirationTime(now - 60)
      .sign(issuer.privateKey);
    const answer = await issuer.exchange(NODE_A, expired, AUD_B);
    expect(answer).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('refuses every delegated token on a node without a2a.auth.delegation', async () => {
    const plain = await startA2ANode({
      config: {
        a2a: {
          auth: {
            oidc: { issuer: issuer.url, audience: AUD_B, allowPrivateNetwork: true },
            callers: [{ name: 'caller-x', oidcSubjects: ['x'] }],
          },
        },
      },
    });
    try {
      const client = await a2aClient(plain.url, 'JSONRPC', { authorization: `Bearer ${await exchanged(NODE_A, X)}` });
      await expect(client.sendMessage(textRequest('delegated'))).rejects.toThrow();
      expect((plain.runner as ScriptedA2ARunner).calls).toHaveLength(0);
    } finally {
      await plain.close();
    }
  });
});

describe('the actor chain and its narrowing', () => {
  const config = LangoConfig.parse({
    a2a: {
      auth: {
        oidc: { issuer: 'https://idp.example', audience: 'aud' },
        delegation: { actors: ['node-a', 'node-b'], maxDepth: 2 },
        callers: [
          { name: 'caller-x', oidcSubjects: ['x'], grant: { toolFamilies: ['librarian', 'fs', 'crypto'] } },
          { name: 'node-a', oidcSubjects: ['node-a'], grant: { toolFamilies: ['librarian', 'fs'], remoteAgents: [] } },
        ],
      },
    },
  });
  const auth = config.a2a.auth!;
  const callers = createCallers(auth, { defaultGrant: DEFAULT_PEER_GRANT });
  const delegation = createDelegation({ delegation: auth.delegation, oidc: auth.oidc!, callers });

  it('reads the chain outermost first, each actor of the issuer', () => {
    expect(
      actorChain({ sub: 'node-b', act: { sub: 'node-a', iss: 'https://idp.example/' } }, 3, 'https://idp.example'),
    ).toEqual(['node-b', 'node-a']);
    expect(actorChain({ sub: 'a', act: { sub: 'b', act: { sub: 'c' } } }, 2, 'https://idp.example')).toEqual({
      refused: expect.stringContaining('maxDepth (2)'),
    });
    expect(actorChain([{ sub: 'a' }], 2, 'https://idp.example')).toEqual({ refused: 'its act claim is not an object' });
  });

  it('narrows the subject to what every actor of the chain may do (an actor no caller names: the default grant)', () => {
    const verdict = delegation.principalOf({ sub: 'x', act: { sub: 'node-b', act: { sub: 'node-a' } } });
    expect(verdict).toEqual({
      principal: {
        kind: 'caller',
        id: 'caller-x',
        grant: {
          specialists: 'all',
          remoteAgents: [],
          toolFamilies: ['librarian', 'fs', 'crypto'].filter(
            (f) => ['librarian', 'fs'].includes(f) && (DEFAULT_PEER_GRANT.toolFamilies as string[]).includes(f),
          ),
        },
        actors: ['node-b', 'node-a'],
      },
    });
  });
});
