import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK } from 'jose';

/**
 * A real OpenID provider for the identity tests (`oidcProvider.mjs`, the
 * npm `oidc-provider` in a child process on 127.0.0.1 port 0), signing with
 * an RSA key made here, so a test can also sign tokens of its own with the
 * issuer's key (expired, wrong audience, …) and count what reached the
 * issuer.
 */

/** One client of the provider (client credentials). */
export interface IssuerClient {
  client_id: string;
  client_secret: string;
  /** The scopes it may ask for, space-separated. */
  scope?: string;
}

/** A running provider. */
export interface OidcIssuer {
  url: string;
  /** The signing key's id in the provider's JWKS. */
  kid: string;
  privateKey: CryptoKey;
  /** The public key as SPKI PEM (what an HMAC-confusion attack signs with). */
  publicPem: string;
  /** Paths requested so far, in order (`/token`, `/.well-known/openid-configuration`, `/jwks`). */
  seen: string[];
  /** Asks for a client-credentials token, as a client would. */
  token(client: IssuerClient, options?: { scope?: string; resource?: string }): Promise<string>;
  /** Exchanges `subjectToken` as `client` for a token of `audience` (RFC 8693): the answer's status and body. */
  exchange(
    client: IssuerClient,
    subjectToken: string,
    audience: string,
    scope?: string,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

/**
 * Starts the provider with `clients`, issuing JWT access tokens for each
 * audience of `resources` (the first is the default), `ttl` seconds long.
 */
export async function startOidcIssuer(options: {
  clients: IssuerClient[];
  resources: Record<string, { scope: string; ttl?: number }>;
  /** Clients that may exchange tokens, each with its own audience (the tokens it may exchange carry it). */
  exchangers?: Record<string, string>;
}): Promise<OidcIssuer> {
  const kid = 'issuer-key-1';
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const script = path.join(__dirname, 'oidcProvider.mjs');
  const config = JSON.stringify({
    jwk,
    clients: options.clients,
    resources: options.resources,
    exchangers: options.exchangers ?? {},
  });
  const child: ChildProcess = spawn(process.execPath, [script, config], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const seen: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the OpenID provider did not start within 20 s:\n${stderr}`));
    }, 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the OpenID provider exited with ${code}:\n${stderr}`));
    });
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      let parsed: { url?: string; seen?: { path: string } };
      try {
        parsed = JSON.parse(line);
      } catch {
        return; // the package's own notices
      }
      if (parsed.seen) seen.push(parsed.seen.path);
      else if (parsed.url) {
        clearTimeout(timer);
        resolve(parsed.url);
      }
    });
  });
  return {
    url,
    kid,
    privateKey,
    publicPem: await exportSPKI(publicKey),
    seen,
    async token(client, asked = {}) {
      const body = new URLSearchParams({ grant_type: 'client_credentials' });
      if (asked.scope) body.set('scope', asked.scope);
      if (asked.resource) body.set('resource', asked.resource);
      const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
      const response = await fetch(`${url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
        body,
      });
      const answer = (await response.json()) as { access_token?: string };
      if (!answer.access_token) throw new Error(`no token: HTTP ${response.status} ${JSON.stringify(answer)}`);
      return answer.access_token;
    },
    async exchange(client, subjectToken, audience, scope) {
      const body = new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: subjectToken,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        resource: audience,
        ...(scope ? { scope } : {}),
      });
      const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
      const response = await fetch(`${url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
        body,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async close() {
      child.stdin!.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
