import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { a2aClient, answerText, asTask, textRequest } from '../support/a2aClient';
import { readNodeDatabase } from '../support/storage';
import { makeCa } from '../support/certificates';
import { startOidcIssuer, type OidcIssuer } from '../support/oidcIssuer';
import { startOpenAIServer, type OpenAIServer } from '../support/openaiServer';

/**
 * Identity end to end (issue 26), every part real: an OpenID provider
 * (`oidc-provider`) issues client-credentials tokens; a peer calls node A
 * with one; node A delegates to node B with a token it fetched itself from
 * the same provider, over mutual TLS with a client certificate `openssl`
 * made; node B checks both. A token whose scopes do not grant a tool gets
 * the grant's refusal note. No token reaches a task row, a conversation or
 * a log line. Node A's model is a scripted OpenAI-compatible server reached
 * by the node's own Chat Completions client; node B answers with its offline
 * model.
 */

const AUDIENCE_A = 'https://node-a.example/a2a';
const AUDIENCE_B = 'https://node-b.example/a2a';
const PEER = { client_id: 'peer-a', client_secret: 'peer-a-secret-1f4c7e2b9d', scope: 'lango:chat lango:delegate' };
const NODE_A = { client_id: 'node-a', client_secret: 'node-a-secret-6a3e8d0c5f', scope: 'lango:delegate' };
const JWT = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/;

describe('identity across two nodes: OIDC tokens both ways, mutual TLS outbound', () => {
  let dir: string;
  let issuer: OidcIssuer;
  let nodeA: LangoApp;
  let nodeB: LangoApp;
  let logsA: MemoryLogger;
  let urlA: string;
  let model: OpenAIServer;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-identity-'));
    const ca = makeCa(dir, 'ca');
    const serverB = ca.server('node-b');
    const clientA = ca.client('node-a');
    issuer = await startOidcIssuer({
      clients: [PEER, NODE_A],
      resources: {
        [AUDIENCE_A]: { scope: 'lango:chat lango:delegate' },
        [AUDIENCE_B]: { scope: 'lango:delegate' },
      },
    });

    nodeB = await createApp(
      resolveConfig({
        server: { port: 0, tls: { cert: serverB.cert, key: serverB.key, clientCa: ca.cert, clientCert: 'required' } },
        dataDir: path.join(dir, 'b'),
        tools: { browser: { enabled: false } },
        a2a: {
          agentName: 'node-b',
          auth: {
            oidc: { issuer: issuer.url, audience: AUDIENCE_B, allowPrivateNetwork: true },
            callers: [{ name: 'node-a', oidcSubjects: ['node-a'] }],
          },
        },
      }),
      { logger: createMemoryLogger() },
    );
    const urlB = await nodeB.listen();

    logsA = createMemoryLogger();
    model = await startOpenAIServer();
    nodeA = await createApp(
      resolveConfig({
        server: { port: 0 },
        dataDir: path.join(dir, 'a'),
        agent: { provider: 'openai', apiKey: 'sk-identity-test', baseUrl: model.baseURL, model: 'scripted' },
        tools: { browser: { enabled: false } },
        a2a: {
          agentName: 'node-a',
          auth: {
            oidc: {
              issuer: issuer.url,
              audience: AUDIENCE_A,
              allowPrivateNetwork: true,
              scopes: {
                'lango:chat': { description: 'conversation only', grant: { toolFamilies: [], remoteAgents: [] } },
                'lango:delegate': { description: 'ask node B', grant: { toolFamilies: [], remoteAgents: ['nodeb'] } },
              },
            },
            callers: [{ name: 'peer-a', oidcSubjects: ['peer-a'], grant: { toolFamilies: 'all' } }],
          },
          remoteAgents: [
            {
              name: 'nodeb',
              baseUrl: urlB,
              auth: {
                type: 'oauth2',
                tokenUrl: `${issuer.url}/token`,
                clientId: NODE_A.client_id,
                clientSecret: NODE_A.client_secret,
                scopes: ['lango:delegate'],
                audience: AUDIENCE_B,
              },
              tls: { cert: clientA.cert, key: clientA.key, ca: ca.cert },
            },
            // The same node without a client certificate: refused in the handshake.
            { name: 'nodebBare', baseUrl: urlB, tls: { ca: ca.cert } },
          ],
        },
      }),
      { logger: logsA },
    );
    urlA = await nodeA.listen();
  }, 60_000);
  afterAll(async () => {
    await nodeA?.close();
    await nodeB?.close();
    await issuer?.close();
    await model?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => expect(model.unexpected).toEqual([]));

  const clientWith = async (scope: string) =>
    a2aClient(urlA, 'JSONRPC', { authorization: `Bearer ${await issuer.token(PEER, { scope })}` });
  const tokenRequests = () => issuer.seen.filter((p) => p === '/token').length;

  it("loads node B's card over mutual TLS and finds what it asks for given", () => {
    const [peer, bare] = nodeA.peers();
    expect(peer).toMatchObject({ name: 'nodeb', state: 'healthy' });
    expect(bare).toMatchObject({
      name: 'nodebBare',
      state: 'skipped',
      reason: expect.stringMatching(/^card unreachable/),
    });
    expect(peer.security).toMatchObject({ satisfied: true, note: 'auth.type oauth2, tls.cert' });
    expect(peer.security?.requires).toMatch(/^OpenID Connect \(.*\) and a client certificate \(mtls\)$/);
  });

  it('delegates a peer’s request to node B with its own token and certificate, fetched once for two calls', async () => {
    const client = await clientWith('lango:delegate');
    const peerTokens = tokenRequests();
    for (const text of ['first question for B', 'second question for B']) {
      model.push({ toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'nodeb' } }] });
      const task = asTask(await client.sendMessage(textRequest(text)));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(task.metadata?.agent).toBe('nodeb');
      expect(answerText(task)).not.toBe('');
    }
    // Node A asked the provider once; node B ran both turns as node-a.
    expect(tokenRequests() - peerTokens).toBe(1);
    const owners = readNodeDatabase(nodeB, (db) => db.prepare('SELECT DISTINCT owner FROM a2a_tasks').all()) as Array<{
      owner: string;
    }>;
    expect(owners.map((o) => o.owner)).toEqual(['node-a']);
    // Node A's tasks are the peer's.
    const ownersA = readNodeDatabase(nodeA, (db) => db.prepare('SELECT DISTINCT owner FROM a2a_tasks').all()) as Array<{
      owner: string;
    }>;
    expect(ownersA.map((o) => o.owner)).toEqual(['peer-a']);
  });

  it("refuses a tool its token's scopes do not grant, with the grant's note, and runs nothing", async () => {
    const client = await clientWith('lango:chat');
    const target = path.join(dir, 'a', 'workspace', 'scoped-out.txt');
    let note = '';
    model.push({ toolCalls: [{ name: 'exec_shell', arguments: { command: `touch ${target}` } }] }, (body) => {
      const last = body.messages.at(-1);
      note = last?.role === 'tool' ? String(last.content) : '';
      return { text: 'That is not allowed for you.' };
    });
    const task = asTask(await client.sendMessage(textRequest('run touch')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(note).toBe(
      'tool exec_shell refused: the caller "peer-a" is not granted the "exec" tool family; it was not run. ' +
        'Tell the user this node does not allow it for them (the owner grants it in a2a.auth.callers).',
    );
    expect(fs.existsSync(target)).toBe(false);
  });

  it('keeps every token out of task rows, conversations and logs', () => {
    for (const app of [nodeA, nodeB]) {
      const tasks = readNodeDatabase(app, (db) =>
        db.prepare('SELECT status, history, artifacts, metadata FROM a2a_tasks').all(),
      );
      expect(JSON.stringify(tasks)).not.toMatch(JWT);
      const messages = readNodeDatabase(app, (db) => db.prepare('SELECT * FROM session_messages').all());
      expect(JSON.stringify(messages)).not.toMatch(JWT);
    }
    expect(JSON.stringify(logsA.records)).not.toMatch(JWT);
    expect(JSON.stringify(logsA.records)).not.toContain(NODE_A.client_secret);
    expect(JSON.stringify(logsA.records)).not.toContain('sk-identity-test');
  });
});
