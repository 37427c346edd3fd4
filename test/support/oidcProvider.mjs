// A real OpenID provider (`oidc-provider`, ESM-only, so run as a child process) issuing client-credentials
// access tokens as JWTs, for the identity tests, and exchanging tokens (OAuth 2.0 Token Exchange, RFC 8693)
// through the provider's own extension API (`registerGrantType`). Listens on 127.0.0.1 port 0 and prints
// `{"url": …}`; prints `{"seen": {"path": …}}` for each request (token, discovery, key set); ends when its
// stdin closes.
// Usage: node oidcProvider.mjs <config JSON>
//   config: { jwk: <private signing JWK with kid and alg>, clients: [{ client_id, client_secret, scope }],
//             resources: { <audience>: { scope: 'a b', ttl?: seconds } },
//             exchangers?: { <client_id>: <the audience of the tokens it may exchange: its own> } }
// A token exchange: the subject token must be one this provider signed, unexpired, whose audience is the
// exchanging client's own (a token given to it); an actor token, when sent, must be the client's own. The new
// token's subject is the subject token's, its `act` the client (the subject token's `act` nested under it), its
// audience the requested resource, its scopes those asked for that both the subject token and the resource
// have, its lifetime at most what is left of the subject token's.
import http from 'node:http';
import { createLocalJWKSet, jwtVerify } from 'jose';
import Provider from 'oidc-provider';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

const config = JSON.parse(process.argv[2] ?? '{}');
const resources = config.resources ?? {};
const allScopes = new Set(Object.values(resources).flatMap((r) => (r.scope ?? '').split(' ').filter(Boolean)));

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}`;

const exchangers = config.exchangers ?? {};
const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = config.jwk;
const ownKeys = createLocalJWKSet({ keys: [publicJwk] });

const provider = new Provider(url, {
  jwks: { keys: [config.jwk] },
  clients: config.clients.map((client) => ({
    grant_types: ['client_credentials', ...(exchangers[client.client_id] ? [TOKEN_EXCHANGE] : [])],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    ...client,
  })),
  scopes: ['openid', ...allScopes],
  ttl: { ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 300 },
  // An exchanged token names the subject it was issued for and the chain of actors (RFC 8693 §4.1).
  formats: {
    customizers: {
      jwt: (_ctx, token, jwt) => {
        if (!token.exchange) return;
        jwt.payload.sub = token.exchange.sub;
        jwt.payload.act = token.exchange.act;
      },
    },
  },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: false },
    resourceIndicators: {
      enabled: true,
      // A client that names no resource gets the first configured one (the node's audience).
      defaultResource: (_ctx, _client, oneOf) => oneOf ?? Object.keys(resources)[0],
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        const resource = resources[indicator];
        if (!resource) throw new Provider.errors.InvalidTarget(`unknown resource ${indicator}`);
        return {
          scope: resource.scope ?? '',
          audience: indicator,
          accessTokenTTL: resource.ttl ?? 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: config.jwk.alg ?? 'RS256' } },
        };
      },
    },
  },
});
provider.on('server_error', (_ctx, error) => process.stderr.write(`oidc-provider error: ${error.stack}\n`));

/** A JWT this provider signed, unexpired; undefined otherwise. */
async function verified(token) {
  try {
    return (await jwtVerify(String(token ?? ''), ownKeys, { issuer: url, requiredClaims: ['exp'] })).payload;
  } catch {
    return undefined;
  }
}

function refuse(ctx, error, description) {
  ctx.status = 400;
  ctx.body = { error, error_description: description };
}

provider.registerGrantType(
  TOKEN_EXCHANGE,
  async (ctx) => {
    const { client, params } = ctx.oidc;
    if (params.subject_token_type !== ACCESS_TOKEN) return refuse(ctx, 'invalid_request', 'unsupported token type');
    const subject = await verified(params.subject_token);
    if (!subject) return refuse(ctx, 'invalid_grant', 'the subject token is not valid');
    const own = exchangers[client.clientId];
    if (![subject.aud].flat().includes(own)) return refuse(ctx, 'invalid_grant', 'the subject token is not for you');
    if (params.actor_token !== undefined) {
      const actor = await verified(params.actor_token);
      if (!actor || actor.client_id !== client.clientId)
        return refuse(ctx, 'invalid_grant', 'the actor token is not yours');
    }
    const indicator = [params.resource ?? params.audience].flat()[0];
    const resource = resources[indicator];
    if (!resource) return refuse(ctx, 'invalid_target', 'unknown audience');
    const held = new Set(
      String(subject.scope ?? '')
        .split(' ')
        .filter(Boolean),
    );
    const offered = new Set(resource.scope.split(' ').filter(Boolean));
    const asked = params.scope ? params.scope.split(' ') : [...held];
    const scope = asked.filter((s) => held.has(s) && offered.has(s)).join(' ');
    const left = subject.exp - Math.floor(Date.now() / 1000);
    const token = new provider.ClientCredentials({ client, scope: scope || undefined });
    token.resourceServer = new provider.ResourceServer(indicator, {
      scope: resource.scope,
      audience: indicator,
      accessTokenTTL: Math.max(1, Math.min(resource.ttl ?? 300, left)),
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: config.jwk.alg ?? 'RS256' } },
    });
    token.exchange = { sub: subject.sub, act: { sub: client.clientId, ...(subject.act ? { act: subject.act } : {}) } };
    const value = await token.save();
    ctx.body = {
      access_token: value,
      issued_token_type: ACCESS_TOKEN,
      token_type: 'Bearer',
      expires_in: token.expiration,
      ...(scope ? { scope } : {}),
    };
  },
  [
    'subject_token',
    'subject_token_type',
    'actor_token',
    'actor_token_type',
    'requested_token_type',
    'audience',
    'resource',
    'scope',
  ],
  ['audience', 'resource'],
);

const callback = provider.callback();
server.on('request', (req, res) => {
  process.stdout.write(`${JSON.stringify({ seen: { method: req.method, path: req.url } })}\n`);
  callback(req, res);
});

process.stdout.write(`${JSON.stringify({ url })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
