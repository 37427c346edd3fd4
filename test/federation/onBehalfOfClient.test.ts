import { decodeJwt } from 'jose';
import { Agent } from 'undici';
import { createOnBehalfOf, type TokenExchangeGrant } from '../../src/federation/onBehalfOf';
import { SecretRegistry } from '../../src/log/redact';
import { SubjectToken } from '../../src/principal';
import { AUDIENCE, CLIENTS, startNetworkIssuer } from '../support/delegationNetwork';
import type { OidcIssuer } from '../support/oidcIssuer';

/**
 * The token exchange of one on-behalf-of remote (issue 33) against the real
 * OpenID provider: one exchange per caller's token, kept until it expires
 * (a caller's later calls cost none), never shared between two tokens of
 * the caller (a narrower token gets a narrower exchange), dropped when the
 * remote refuses it, refused without asking the issuer when the caller's
 * token has expired; `preferred` without a token is the node's own token;
 * `check` exchanges the node's own token to say whether on-behalf-of works.
 */

describe('the on-behalf-of token exchange', () => {
  let issuer: OidcIssuer;
  const dispatcher = new Agent();
  const grant = (more: Partial<TokenExchangeGrant> = {}): TokenExchangeGrant => ({
    tokenUrl: `${issuer.url}/token`,
    clientId: CLIENTS.a.client_id,
    clientSecret: CLIENTS.a.client_secret,
    clientAuth: 'basic',
    audience: AUDIENCE.b,
    scopes: [],
    onBehalfOf: 'required',
    actorToken: false,
    ...more,
  });
  const exchanges = () => issuer.seen.filter((p) => p === '/token').length;
  const bearer = async (credentials: { headers(): Promise<Record<string, string>> }) =>
    (await credentials.headers()).authorization.replace(/^Bearer /, '');

  beforeAll(async () => {
    issuer = await startNetworkIssuer();
  }, 30_000);
  afterAll(async () => {
    await dispatcher.close();
    await issuer?.close();
  });

  it("exchanges a caller's token once, for the remote, as its actor, and keeps it for the caller's later calls", async () => {
    const secrets = new SecretRegistry();
    const onBehalfOf = createOnBehalfOf({ name: 'node-b', grant: grant(), dispatcher, secrets });
    const subject = new SubjectToken(await issuer.token(CLIENTS.x, { resource: AUDIENCE.a }));
    const before = exchanges();
    const first = await onBehalfOf.forCall(subject);
    if (!first.ok) throw new Error(first.reason);
    const token = await bearer(first.credentials);
    expect(decodeJwt(token)).toMatchObject({ sub: 'x', aud: AUDIENCE.b, act: { sub: 'node-a' } });
    const again = await onBehalfOf.forCall(subject);
    expect(again.ok && (await bearer(again.credentials))).toBe(token);
    expect(exchanges()).toBe(before + 1);
    // Masked wherever a peer would echo it, while kept.
    expect(secrets.redactText(`echo ${token}`)).toBe('echo [REDACTED]');
    expect(onBehalfOf.last()).toMatchObject({ ok: true });
  });

  it('never hands one token of the caller the exchange made for another (a narrower token keeps its narrower scope)', async () => {
    const onBehalfOf = createOnBehalfOf({ name: 'node-b', grant: grant(), dispatcher });
    const wide = new SubjectToken(
      await issuer.token(CLIENTS.x, { resource: AUDIENCE.a, scope: 'lango:chat lango:librarian' }),
    );
    const narrow = new SubjectToken(await issuer.token(CLIENTS.x, { resource: AUDIENCE.a, scope: 'lango:chat' }));
    const [forWide, forNarrow] = await Promise.all([onBehalfOf.forCall(wide), onBehalfOf.forCall(narrow)]);
    if (!forWide.ok || !forNarrow.ok) throw new Error('an exchange failed');
    expect(decodeJwt(await bearer(forWide.credentials)).scope).toBe('lango:chat lango:librarian');
    expect(decodeJwt(await bearer(forNarrow.credentials)).scope).toBe('lango:chat');
  });

  it('exchanges again once the remote refused the kept token', async () => {
    const secrets = new SecretRegistry();
    const onBehalfOf = createOnBehalfOf({ name: 'node-b', grant: grant(), dispatcher, secrets });
    const call = await onBehalfOf.forCall(new SubjectToken(await issuer.token(CLIENTS.x, { resource: AUDIENCE.a })));
    if (!call.ok) throw new Error(call.reason);
    const sent = await call.credentials.headers();
    const before = exchanges();
    call.credentials.rejected(sent);
    // Forgotten by the redactor once dropped: the registry holds only tokens in use.
    expect(secrets.redactText(sent.authorization)).toBe(sent.authorization);
    expect(await call.credentials.headers()).not.toEqual(sent);
    expect(exchanges()).toBe(before + 1);
  });

  it("refuses, without asking the issuer, when the caller's token has expired", async () => {
    const token = await issuer.token(CLIENTS.x, { resource: AUDIENCE.a });
    const expiry = (decodeJwt(token).exp as number) * 1000;
    const onBehalfOf = createOnBehalfOf({ name: 'node-b', grant: grant(), dispatcher, now: () => expiry + 1 });
    const before = exchanges();
    expect(await onBehalfOf.forCall(new SubjectToken(token))).toEqual({
      ok: false,
      reason: "the caller's token has expired: nothing to exchange for node-b",
    });
    expect(exchanges()).toBe(before);
  });

  it("sends the node's own token as the actor token where configured", async () => {
    const onBehalfOf = createOnBehalfOf({ name: 'node-b', grant: grant({ actorToken: true }), dispatcher });
    const call = await onBehalfOf.forCall(new SubjectToken(await issuer.token(CLIENTS.x, { resource: AUDIENCE.a })));
    if (!call.ok) throw new Error(call.reason);
    expect(decodeJwt(await bearer(call.credentials))).toMatchObject({ sub: 'x', act: { sub: 'node-a' } });
  });

  it("gives a caller with nothing to exchange the node's own token with preferred, and refuses it with required", async () => {
    const preferred = await createOnBehalfOf({
      name: 'node-b',
      grant: grant({ onBehalfOf: 'preferred' }),
      dispatcher,
    }).forCall(undefined);
    if (!preferred.ok) throw new Error(preferred.reason);
    expect(preferred.onBehalfOf).toBe(false);
    expect(decodeJwt(await bearer(preferred.credentials))).toMatchObject({ sub: 'node-a', aud: AUDIENCE.b });
    expect(decodeJwt(await bearer(preferred.credentials)).act).toBeUndefined();
    const required = await createOnBehalfOf({ name: 'node-b', grant: grant(), dispatcher }).forCall(undefined);
    expect(required).toMatchObject({
      ok: false,
      needs: 'auth',
      reason: expect.stringContaining('onBehalfOf: required'),
    });
  });

  it("checks whether the issuer performs the exchange with a token of the node's own", async () => {
    const works = createOnBehalfOf({ name: 'node-b', grant: grant(), dispatcher });
    expect(await works.check(AUDIENCE.a)).toMatchObject({ ok: true, probe: true });
    const wrongSecret = createOnBehalfOf({ name: 'node-b', grant: grant({ clientSecret: 'not-it-0000' }), dispatcher });
    expect(await wrongSecret.check(AUDIENCE.a)).toMatchObject({
      ok: false,
      probe: true,
      reason: expect.stringMatching(/failed: HTTP 401 \(invalid_client\)/),
    });
    expect(await works.check(undefined)).toMatchObject({ ok: true });
    expect(await wrongSecret.check(undefined)).toMatchObject({ ok: false });
    const never = createOnBehalfOf({ name: 'node-b', grant: grant(), dispatcher });
    expect(await never.check(undefined)).toMatchObject({ ok: false, reason: expect.stringMatching(/^not checked/) });
  });

  it('keeps at most maxEntries exchanged tokens, forgetting the oldest (and the redactor with it)', async () => {
    const secrets = new SecretRegistry();
    const onBehalfOf = createOnBehalfOf({ name: 'node-b', grant: grant(), dispatcher, secrets, maxEntries: 1 });
    const first = await onBehalfOf.forCall(new SubjectToken(await issuer.token(CLIENTS.x, { resource: AUDIENCE.a })));
    if (!first.ok) throw new Error(first.reason);
    const firstToken = await bearer(first.credentials);
    await onBehalfOf.forCall(new SubjectToken(await issuer.token(CLIENTS.x, { resource: AUDIENCE.a })));
    expect(secrets.redactText(firstToken)).toBe(firstToken);
    const before = exchanges();
    expect(await bearer(first.credentials)).not.toBe(firstToken);
    expect(exchanges()).toBe(before + 1);
  });
});
