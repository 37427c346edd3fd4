import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';
import { startOidcIssuer, type OidcIssuer } from '../support/oidcIssuer';

/**
 * Issue 37 §2: identity is built once. An owner's OIDC token, never seen
 * before, is the owner at its first request on every page — `/node/*`, the
 * console's sign-in, `/metrics` — as on A2A, and one key set serves them all
 * (the issuer's keys are fetched once for the node, not once per page).
 */

const AUDIENCE = 'https://node.example/a2a';
const BOSS = { client_id: 'boss-client', client_secret: 'boss-secret-5e7a9c1b3d', scope: 'lango:chat' };
const PEER = { client_id: 'peer-a', client_secret: 'peer-a-secret-3c9e1f7a', scope: 'lango:chat' };

describe('one identity component for A2A and every page', () => {
  let issuer: OidcIssuer;
  let app: LangoApp;
  let url: string;
  let dir: string;

  beforeAll(async () => {
    issuer = await startOidcIssuer({
      clients: [BOSS, PEER],
      resources: { [AUDIENCE]: { scope: 'lango:chat', ttl: 300 } },
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-one-identity-'));
    const config = resolveConfig({
      server: { host: '127.0.0.1', port: 0 },
      dataDir: dir,
      tools: { browser: { enabled: false } },
      a2a: {
        auth: {
          oidc: { issuer: issuer.url, audience: AUDIENCE, allowPrivateNetwork: true },
          callers: [
            { name: 'boss', oidcSubjects: ['boss-client'], owner: true },
            { name: 'peer', oidcSubjects: ['peer-a'] },
          ],
        },
      },
    });
    app = await createApp(config, { logger: createMemoryLogger() });
    url = await app.listen();
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await issuer?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it("takes an owner's new token at its first request on /node/*, /metrics and the console's sign-in", async () => {
    for (const route of ['/node/tools', '/metrics']) {
      const token = await issuer.token(BOSS, { resource: AUDIENCE });
      expect({ route, status: (await fetch(`${url}${route}`, { headers: bearer(token) })).status }).toEqual({
        route,
        status: 200,
      });
    }
    const token = await issuer.token(BOSS, { resource: AUDIENCE });
    const signIn = await fetch(`${url}/console/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
      redirect: 'manual',
    });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('set-cookie')).toMatch(/^lango_console=/);
  });

  it("refuses a caller's token on the owner's pages and admits it on A2A, with one key set for all", async () => {
    const token = await issuer.token(PEER, { resource: AUDIENCE });
    expect((await fetch(`${url}/node/tools`, { headers: bearer(token) })).status).toBe(403);
    const send = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...bearer(token) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'one-id-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } },
      }),
    });
    expect(send.status).toBe(200);
    expect(((await send.json()) as { result?: unknown }).result).toBeDefined();
    // Every token of both tests was checked against one key set, fetched once.
    expect(issuer.seen.filter((seen) => seen === '/jwks')).toHaveLength(1);
  });
});
