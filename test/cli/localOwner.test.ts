import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryLogger, resolveConfig, serveNode, type LangoConfigInput, type ServingNode } from '../../src/index';
import { DataFolderBusyError } from '../../src/serve/dataLock';
import { OWNER_TOKEN_FILE } from '../../src/serve/ownerToken';
import { grpcCall } from '../support/grpcCall';

jest.setTimeout(60_000);

/** The README's auth example: one plain bearer token (a named caller with the default grant, not the owner). */
const HUB_TOKEN = 'readme-hub-token-0123456789';
const README_AUTH: LangoConfigInput = { a2a: { agentName: 'hub', auth: { bearerTokens: [HUB_TOKEN] } } };

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Issue 37, item 5: the node's own user is its owner without ceremony, on every binding and page. */
describe('the local owner token', () => {
  const dirs: string[] = [];
  const nodes: ServingNode[] = [];
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.close();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function serve(input: LangoConfigInput, dataDir?: string): Promise<ServingNode> {
    const dir = dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'lango-owner-'));
    if (!dataDir) dirs.push(dir);
    const config = resolveConfig({
      server: { port: 0, grpcPort: 0 },
      dataDir: path.join(dir, '.lango'),
      tools: { browser: { enabled: false } },
      ...input,
    });
    const node = await serveNode(config, { logger: createMemoryLogger(), cwd: dir });
    nodes.push(node);
    return node;
  }

  const ownerToken = (node: ServingNode) => fs.readFileSync(node.ownerTokenFile, 'utf8').trim();

  const rpc = (url: string, method: string, params: unknown, headers: Record<string, string>) =>
    fetch(`${url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as { result?: Record<string, unknown> } }));

  const greeting = (id: string) => ({
    message: { messageId: id, role: 'ROLE_USER', parts: [{ text: 'hello' }] },
  });

  it('is written 0600 in the data folder, new at each start, and removed at a clean stop', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-owner-'));
    dirs.push(dir);
    const first = await serve(README_AUTH, dir);
    expect(first.ownerTokenFile).toBe(path.join(dir, '.lango', OWNER_TOKEN_FILE));
    const stat = fs.statSync(first.ownerTokenFile);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(stat.uid).toBe(process.getuid!());
    const token = ownerToken(first);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // One node per folder: a second one is refused before it writes anything.
    await expect(serve(README_AUTH, dir)).rejects.toBeInstanceOf(DataFolderBusyError);
    expect(ownerToken(first)).toBe(token);
    await first.close();
    nodes.splice(nodes.indexOf(first), 1);
    expect(fs.existsSync(first.ownerTokenFile)).toBe(false);
    const second = await serve(README_AUTH, dir);
    expect(ownerToken(second)).not.toBe(token);
    // The old token opens nothing on the new node.
    expect((await fetch(`${second.url}/node/tools`, { headers: bearer(token) })).status).toBe(401);
  });

  it("is the owner on JSON-RPC, HTTP+JSON, gRPC, /agents, /node/*, /metrics and the console's sign-in; the README's token is a named caller", async () => {
    const node = await serve(README_AUTH);
    const owner = bearer(ownerToken(node));
    const caller = bearer(HUB_TOKEN);
    const grpcAddress = `127.0.0.1:${node.app.grpcPort}`;

    const mine = await rpc(node.url, 'SendMessage', greeting('by-owner'), owner);
    const theirs = await rpc(node.url, 'SendMessage', greeting('by-caller'), caller);
    const ownerTask = (mine.body.result?.task as { id: string }).id;
    const callerTask = (theirs.body.result?.task as { id: string }).id;
    const ids = (result: unknown) => ((result as { tasks?: { id: string }[] }).tasks ?? []).map((t) => t.id).sort();
    // The owner reads every caller's tasks, a named caller only its own: on each binding.
    expect(ids((await rpc(node.url, 'ListTasks', {}, owner)).body.result)).toEqual([ownerTask, callerTask].sort());
    expect(ids((await rpc(node.url, 'ListTasks', {}, caller)).body.result)).toEqual([callerTask]);
    const rest = await fetch(`${node.url}/tasks`, { headers: { ...owner, 'a2a-version': '1.0' } });
    expect(ids(await rest.json())).toEqual([ownerTask, callerTask].sort());
    const overGrpc = await grpcCall(grpcAddress, 'ListTasks', {}, owner);
    expect(overGrpc.error).toBeUndefined();
    expect(((overGrpc.messages[0] as { tasks: { id: string }[] }).tasks ?? []).length).toBe(2);
    const callerOverGrpc = await grpcCall(grpcAddress, 'ListTasks', {}, caller);
    expect(((callerOverGrpc.messages[0] as { tasks: { id: string }[] }).tasks ?? []).map((t) => t.id)).toEqual([
      callerTask,
    ]);

    // The owner's pages: the README's token is refused there (a caller), no credential asks for one.
    for (const page of ['/node/tools', '/node/doctor', '/node/agents', '/metrics']) {
      const statuses = await Promise.all(
        [owner, caller, {}].map(async (headers) => (await fetch(`${node.url}${page}`, { headers })).status),
      );
      expect([page, statuses]).toEqual([page, [200, 403, 401]]);
    }
    expect((await fetch(`${node.url}/agents`, { headers: owner })).status).toBe(200);

    // The console signs in with the owner token: a session cookie, then the console itself.
    const signIn = (token: string) =>
      fetch(`${node.url}/console/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
        redirect: 'manual',
      });
    const signedIn = await signIn(ownerToken(node));
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${node.url}/console`, { headers: { cookie } })).status).toBe(200);
    const refused = await signIn(HUB_TOKEN);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('only the node owner may look');
    expect((await signIn('not-a-token-of-this-node')).status).toBe(401);
  });

  it('leaves a configured owner credential working beside it, in the console too', async () => {
    const admin = 'configured-owner-token-42';
    const node = await serve({
      a2a: { auth: { bearerTokens: [HUB_TOKEN], callers: [{ name: 'admin', owner: true, bearerTokens: [admin] }] } },
    });
    for (const token of [admin, ownerToken(node)]) {
      expect((await fetch(`${node.url}/node/tools`, { headers: bearer(token) })).status).toBe(200);
      const signedIn = await fetch(`${node.url}/console/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
        redirect: 'manual',
      });
      expect(signedIn.status).toBe(303);
    }
  });

  it('without a2a.auth on loopback changes nothing: every local caller is the owner, the token too', async () => {
    const node = await serve({});
    expect((await fetch(`${node.url}/node/tools`)).status).toBe(200);
    expect((await fetch(`${node.url}/node/tools`, { headers: bearer(ownerToken(node)) })).status).toBe(200);
    expect((await fetch(`${node.url}/console`)).status).toBe(200);
  });
});
