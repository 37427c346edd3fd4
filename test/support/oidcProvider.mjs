// A real OpenID provider (`oidc-provider`, ESM-only, so run as a child process) issuing client-credentials
// access tokens as JWTs, for the identity tests. Listens on 127.0.0.1 port 0 and prints `{"url": …}`; prints
// `{"seen": {"path": …}}` for each request (token, discovery, key set); ends when its stdin closes.
// Usage: node oidcProvider.mjs <config JSON>
//   config: { jwk: <private signing JWK with kid and alg>, clients: [{ client_id, client_secret, scope }],
//             resources: { <audience>: { scope: 'a b', ttl?: seconds } } }
import http from 'node:http';
import Provider from 'oidc-provider';

const config = JSON.parse(process.argv[2] ?? '{}');
const resources = config.resources ?? {};
const allScopes = new Set(Object.values(resources).flatMap((r) => (r.scope ?? '').split(' ').filter(Boolean)));

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(url, {
  jwks: { keys: [config.jwk] },
  clients: config.clients.map((client) => ({
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    ...client,
  })),
  scopes: ['openid', ...allScopes],
  ttl: { ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 300 },
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
