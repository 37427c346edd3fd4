import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SendMessageRequest, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { Agent, fetch as undiciFetch } from 'undici';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';
import { asTask, textRequest } from '../support/a2aClient';
import { readNodeDatabase } from '../support/storage';
import { makeCa, type CertificateFiles, type TestCa } from '../support/certificates';

/**
 * Mutual TLS on the node's port (issue 26), with certificates made by
 * `openssl`: `server.tls` serves HTTPS; with `clientCert: required` a
 * client without a certificate of the configured CA is refused in the
 * handshake; with `optional` it gets in, and a certificate of another CA
 * authenticates nobody (a plain 401, nothing run). A certificate maps to a
 * caller by subject or SHA-256 fingerprint; one that maps to none is a
 * caller of its own.
 */

let dir: string;
let ca: TestCa;
let other: TestCa;
let server: CertificateFiles;
let peerA: CertificateFiles;
let peerB: CertificateFiles;
let unnamed: CertificateFiles;
let stranger: CertificateFiles;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-mtls-'));
  ca = makeCa(dir, 'ca');
  other = makeCa(dir, 'other');
  server = ca.server('node');
  peerA = ca.client('peer-a');
  peerB = ca.client('peer-b');
  unnamed = ca.client('unnamed');
  stranger = other.client('peer-a');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const read = (file: string) => fs.readFileSync(file, 'utf8');

/** An undici agent trusting the test CA, presenting `client` when given. */
function agentFor(client?: CertificateFiles): Agent {
  return new Agent({
    connect: { ca: read(ca.cert), ...(client ? { cert: read(client.cert), key: read(client.key) } : {}) },
  });
}

/** A real SDK client over `dispatcher`. */
async function clientOver(url: string, dispatcher: Agent): Promise<Client> {
  const fetchImpl = ((input: string, init?: RequestInit) =>
    undiciFetch(input, { ...(init as object), dispatcher })) as unknown as typeof fetch;
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      preferredTransports: ['JSONRPC'],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(url);
}

async function startNode(clientCert: 'required' | 'optional'): Promise<{ app: LangoApp; url: string }> {
  const dataDir = fs.mkdtempSync(path.join(dir, `node-${clientCert}-`));
  const config = resolveConfig({
    server: { port: 0, tls: { cert: server.cert, key: server.key, clientCa: ca.cert, clientCert } },
    dataDir,
    a2a: {
      auth: {
        callers: [
          { name: 'peer-a', clientCertificates: [{ subject: 'CN=peer-a, O=Lango Test' }] },
          { name: 'peer-b', clientCertificates: [{ fingerprint: peerB.fingerprint256.toLowerCase() }] },
        ],
      },
    },
    tools: { browser: { enabled: false } },
  });
  const app = await createApp(config, { logger: createMemoryLogger() });
  return { app, url: await app.listen() };
}

const ownerOfTask = (app: LangoApp, id: string) =>
  (
    readNodeDatabase(app, (db) => db.prepare('SELECT owner FROM a2a_tasks WHERE id = ?').get(id)) as
      { owner: string } | undefined
  )?.owner;
const taskCount = (app: LangoApp) =>
  (readNodeDatabase(app, (db) => db.prepare('SELECT count(*) AS n FROM a2a_tasks').get()) as { n: number }).n;

describe('server.tls with clientCert: required', () => {
  let node: { app: LangoApp; url: string };
  beforeAll(async () => {
    node = await startNode('required');
  });
  afterAll(() => node.app.close());

  it('serves HTTPS and runs a turn as the caller the certificate subject names', async () => {
    expect(node.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const dispatcher = agentFor(peerA);
    try {
      const task = asTask(await (await clientOver(node.url, dispatcher)).sendMessage(textRequest('hello over mTLS')));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(ownerOfTask(node.app, task.id)).toBe('peer-a');
    } finally {
      await dispatcher.close();
    }
  });

  it('declares the mtls scheme on its card', async () => {
    const card = (await node.app.agentCard()) as {
      securitySchemes: Record<string, unknown>;
      securityRequirements: unknown;
    };
    expect(card.securitySchemes.mtls).toEqual({
      mtlsSecurityScheme: { description: 'A client certificate the node operator issued.' },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { mtls: {} } }]);
  });

  it('refuses in the handshake a client without a certificate, or with one of another CA', async () => {
    for (const client of [undefined, stranger]) {
      const dispatcher = agentFor(client);
      try {
        const before = taskCount(node.app);
        await expect(undiciFetch(`${node.url}/.well-known/agent-card.json`, { dispatcher })).rejects.toThrow();
        expect(taskCount(node.app)).toBe(before);
      } finally {
        await dispatcher.close();
      }
    }
  });
});

describe('server.tls with clientCert: optional', () => {
  let node: { app: LangoApp; url: string };
  beforeAll(async () => {
    node = await startNode('optional');
  });
  afterAll(() => node.app.close());

  const send = (dispatcher: Agent) =>
    undiciFetch(node.url, {
      method: 'POST',
      dispatcher,
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: SendMessageRequest.toJSON(textRequest('over optional mTLS')),
      }),
    });

  it('maps a certificate by fingerprint, and one no caller names to a caller of its own', async () => {
    for (const [client, owner] of [
      [peerB, 'peer-b'],
      [unnamed, `cert:${unnamed.fingerprint256.replace(/:/g, '').toLowerCase().slice(0, 16)}`],
    ] as const) {
      const dispatcher = agentFor(client);
      try {
        const answer = (await (await send(dispatcher)).json()) as { result: { task: { id: string } } };
        expect(ownerOfTask(node.app, answer.result.task.id)).toBe(owner);
      } finally {
        await dispatcher.close();
      }
    }
  });

  it('refuses with a plain 401 and runs nothing: no certificate, or a certificate of another CA', async () => {
    for (const client of [undefined, stranger]) {
      const dispatcher = agentFor(client);
      try {
        const before = taskCount(node.app);
        const response = await send(dispatcher);
        expect(response.status).toBe(401);
        expect(await response.json()).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: 'authentication required: present a valid bearer token or API key' },
        });
        expect(taskCount(node.app)).toBe(before);
      } finally {
        await dispatcher.close();
      }
    }
  });

  it('takes an optional certificate as one way in among others on its card', async () => {
    const card = (await node.app.agentCard()) as { securityRequirements: unknown };
    expect(card.securityRequirements).toEqual([{ schemes: { mtls: {} } }]);
  });
});
