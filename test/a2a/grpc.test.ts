import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ListTasksRequest, TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import {
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { decodeErrorInfo, decodeStatus, GRPC_STATUS_DETAILS_BIN } from '@a2a-js/sdk/errors/grpc';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import type { ScriptedA2ARunner } from '../support/a2aRunner';
import { a2aClient, answerText, asTask, collect, describeStream, textRequest } from '../support/a2aClient';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { waitFor } from '../support/waitFor';
import { makeCa, type TestCa } from '../support/certificates';
import { serverTlsOptions } from '../../src/identity/serverTls';

const TOKEN = 'grpc-test-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** A raw unary call on the node's service, bytes in and out: what a client that is not the SDK may send. */
function rawCall(
  address: string,
  method: string,
  body: Buffer,
  metadata = new grpc.Metadata(),
  credentials = grpc.credentials.createInsecure(),
) {
  const client = new grpc.Client(address, credentials);
  return new Promise<{ error?: grpc.ServiceError; value?: Buffer }>((resolve) => {
    client.makeUnaryRequest(
      `/lf.a2a.v1.A2AService/${method}`,
      (value: Buffer) => value,
      (value: Buffer) => value,
      body,
      metadata,
      { deadline: Date.now() + 20_000 },
      (error, value) => {
        client.close();
        resolve({ error: error ?? undefined, value });
      },
    );
  });
}

/** The status details of a gRPC error: the ErrorInfo reason and the BadRequest's type, as the node sent them. */
function detailsOf(error: grpc.ServiceError): { types: string[]; reason?: string; field?: string } {
  const [blob] = error.metadata.get(GRPC_STATUS_DETAILS_BIN);
  const status = decodeStatus(blob as Buffer);
  const info = status.details.find((d) => d.typeUrl.endsWith('google.rpc.ErrorInfo'));
  const decoded = info && decodeErrorInfo(info.value);
  return { types: status.details.map((d) => d.typeUrl), reason: decoded?.reason, field: decoded?.metadata.field };
}

describe('the SDK gRPC client against the node (every method, streaming and errors)', () => {
  let node: A2ATestNode;
  let client: Client;
  beforeAll(async () => {
    node = await startA2ANode({ grpc: true, config: { a2a: { auth: { bearerTokens: [TOKEN] } } } });
    client = await a2aClient(node.url, 'GRPC', AUTH);
  });
  afterAll(() => node.close());

  it('lists the gRPC interface in the card', async () => {
    const card = await node.a2a.card();
    expect(card.supportedInterfaces).toEqual(
      expect.arrayContaining([{ url: node.grpcAddress, protocolBinding: 'GRPC', protocolVersion: '1.0' }]),
    );
    expect(client.transport.protocolName).toBe('GRPC');
  });

  it('answers SendMessage, GetTask and ListTasks', async () => {
    const task = asTask(await client.sendMessage(textRequest('hello over grpc')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(task)).toBe('echo: hello over grpc');
    const read = await client.getTask({ tenant: '', id: task.id, historyLength: 1 });
    expect(read.id).toBe(task.id);
    expect(read.history).toHaveLength(1);
    const listed = await client.listTasks(ListTasksRequest.fromJSON({ contextId: task.contextId, pageSize: 10 }));
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);
  });

  it('streams SendStreamingMessage events in order', async () => {
    const events = await collect(client.sendMessageStream(textRequest('stream me')));
    const states = describeStream(events);
    expect(states[0]).toBe('task:1');
    expect(states.at(-1)).toBe(`status:${TaskState.TASK_STATE_COMPLETED}`);
    expect(states).toContain('artifact');
  });

  it('follows a working task with SubscribeToTask and cancels it with CancelTask', async () => {
    const started = asTask(await client.sendMessage(textRequest('[hold] work', {}, { returnImmediately: true })));
    const followed = collect(client.resubscribeTask({ tenant: '', id: started.id }));
    const canceled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const events = await followed;
    expect(describeStream(events)[0]).toMatch(/^task:/);
    expect(describeStream(events).at(-1)).toBe(`status:${TaskState.TASK_STATE_CANCELED}`);
  });

  it('lets a caller leave a stream: the task runs on to its answer', async () => {
    const leaving = new AbortController();
    const stream = client.sendMessageStream(textRequest('slow and steady'), { signal: leaving.signal });
    const first = await stream.next();
    const taskId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
    expect(taskId).not.toBe('');
    leaving.abort();
    await expect(stream.next()).rejects.toThrow();
    await waitFor(
      async () =>
        (await client.getTask({ tenant: '', id: taskId, historyLength: 0 })).status?.state ===
        TaskState.TASK_STATE_COMPLETED,
      20_000,
      'the task to complete',
    );
  });

  it('keeps push configs: create, get, list, delete', async () => {
    const task = asTask(await client.sendMessage(textRequest('push target')));
    const config = { tenant: '', id: 'hook-1', taskId: task.id, url: 'http://127.0.0.1:9/hook', token: 't' };
    const created = await client.createTaskPushNotificationConfig(config as never);
    expect(created).toMatchObject({ id: 'hook-1', taskId: task.id, url: 'http://127.0.0.1:9/hook' });
    expect(await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'hook-1' })).toMatchObject({
      id: 'hook-1',
    });
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(listed.configs.map((c) => c.id)).toEqual(['hook-1']);
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'hook-1' });
    const after = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(after.configs).toEqual([]);
  });

  it('serves the extended card to an authenticated caller', async () => {
    // The card says it has one (a2a.auth is configured): the client asks GetExtendedAgentCard for it.
    const card = await client.getAgentCard();
    expect(card.skills.some((skill) => /\(\d+ tools\)/.test(skill.description))).toBe(true);
  });

  it('answers A2A errors with their status and ErrorInfo, as the SDK client reads them', async () => {
    await expect(client.getTask({ tenant: '', id: 'no-such-task', historyLength: 0 })).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
    const done = asTask(await client.sendMessage(textRequest('finished')));
    await expect(client.cancelTask({ tenant: '', id: done.id, metadata: undefined })).rejects.toBeInstanceOf(
      TaskNotCancelableError,
    );
    await expect(collect(client.resubscribeTask({ tenant: '', id: done.id }))).rejects.toBeInstanceOf(
      UnsupportedOperationError,
    );
    const noParts = textRequest('x');
    noParts.message!.parts = [];
    await expect(client.sendMessage(noParts)).rejects.toBeInstanceOf(RequestMalformedError);
  });

  it('sends google.rpc.Status details: ErrorInfo, and a BadRequest naming the field of invalid params', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', AUTH.authorization);
    metadata.set('a2a-version', '1.0');
    const missing = await rawCall(
      node.grpcAddress!,
      'GetTask',
      Buffer.from(A2AService.getTask.requestSerialize({ tenant: '', id: 'nope', historyLength: undefined })),
      metadata,
    );
    expect(missing.error?.code).toBe(grpc.status.NOT_FOUND);
    expect(detailsOf(missing.error!)).toMatchObject({ reason: 'TASK_NOT_FOUND' });
    const badPage = await rawCall(
      node.grpcAddress!,
      'ListTasks',
      Buffer.from(A2AService.listTasks.requestSerialize(ListTasksRequest.fromJSON({ pageSize: 500 }))),
      metadata,
    );
    expect(badPage.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(detailsOf(badPage.error!)).toEqual({
      types: ['type.googleapis.com/google.rpc.ErrorInfo', 'type.googleapis.com/google.rpc.BadRequest'],
      reason: 'INVALID_PARAMS',
      field: 'pageSize',
    });
  });

  it('refuses a call without the credential (UNAUTHENTICATED) before the agent runs', async () => {
    const runner = node.runner as ScriptedA2ARunner;
    const before = runner.calls.length;
    const anonymous = await a2aClient(node.url, 'GRPC', { authorization: 'Bearer wrong' });
    await expect(anonymous.sendMessage(textRequest('let me in'))).rejects.toThrow(/authentication required/);
    await expect(collect(anonymous.sendMessageStream(textRequest('let me in')))).rejects.toThrow(
      /authentication required/,
    );
    expect(runner.calls.length).toBe(before);
  });

  it('refuses an unknown A2A-Version with FAILED_PRECONDITION (v1.0.1 §5.4)', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', AUTH.authorization);
    metadata.set('a2a-version', '9.9');
    const answer = await rawCall(
      node.grpcAddress!,
      'GetTask',
      Buffer.from(A2AService.getTask.requestSerialize({ tenant: '', id: 'x', historyLength: undefined })),
      metadata,
    );
    expect(answer.error?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(detailsOf(answer.error!).reason).toBe('VERSION_NOT_SUPPORTED');
  });

  it('survives what a caller may send: garbage bytes, an unknown method, a message over a2a.maxBodyBytes', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', AUTH.authorization);
    const garbage = await rawCall(
      node.grpcAddress!,
      'SendMessage',
      Buffer.from([0xff, 0xff, 0xff, 0x0f, 0x01]),
      metadata,
    );
    expect(garbage.error).toBeDefined();
    const unknown = await rawCall(node.grpcAddress!, 'Explode', Buffer.alloc(0), metadata);
    expect(unknown.error?.code).toBe(grpc.status.UNIMPLEMENTED);
    const huge = textRequest('x'.repeat(node.config.a2a.maxBodyBytes + 1));
    const oversized = await rawCall(
      node.grpcAddress!,
      'SendMessage',
      Buffer.from(A2AService.sendMessage.requestSerialize(huge)),
      metadata,
    );
    expect(oversized.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    // Still serving.
    expect(asTask(await client.sendMessage(textRequest('still here'))).status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
  });
});

describe('the gRPC binding over TLS (server.tls)', () => {
  let node: A2ATestNode;
  let dir: string;
  let ca: TestCa;
  let address: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-grpc-tls-'));
    ca = makeCa(dir, 'ca');
    const server = ca.server('node');
    const serverTls = { cert: server.cert, key: server.key, clientCa: ca.cert, clientCert: 'required' as const };
    node = await startA2ANode({
      config: {
        server: { host: '127.0.0.1', port: 0, tls: serverTls },
        a2a: {
          auth: {
            bearerTokens: [TOKEN],
            callers: [{ name: 'certified', clientCertificates: [{ subject: 'CN=certified, O=Lango Test' }] }],
          },
        },
      },
    });
    const tls = serverTlsOptions(serverTls, dir);
    address = `127.0.0.1:${await node.a2a.listenGrpc('127.0.0.1', 0, tls)}`;
  });
  afterAll(async () => {
    await node.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const getTask = (credentials: grpc.ChannelCredentials) => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', AUTH.authorization);
    metadata.set('a2a-version', '1.0');
    const body = Buffer.from(A2AService.getTask.requestSerialize({ tenant: '', id: 'nope', historyLength: undefined }));
    return rawCall(address, 'GetTask', body, metadata, credentials);
  };

  it('answers a client that trusts the node’s CA and presents a certificate the client CA issued', async () => {
    const client = ca.client('caller');
    const answer = await getTask(
      grpc.credentials.createSsl(fs.readFileSync(ca.cert), fs.readFileSync(client.key), fs.readFileSync(client.cert)),
    );
    expect(answer.error?.code).toBe(grpc.status.NOT_FOUND);
    expect(detailsOf(answer.error!).reason).toBe('TASK_NOT_FOUND');
  });

  it('runs a call as the caller its client certificate names (mTLS), as the HTTP bindings do', async () => {
    const client = ca.client('certified');
    const credentials = grpc.credentials.createSsl(
      fs.readFileSync(ca.cert),
      fs.readFileSync(client.key),
      fs.readFileSync(client.cert),
    );
    const runner = node.runner as ScriptedA2ARunner;
    const before = runner.calls.length;
    const metadata = new grpc.Metadata();
    metadata.set('a2a-version', '1.0');
    const sent = await rawCall(
      address,
      'SendMessage',
      Buffer.from(A2AService.sendMessage.requestSerialize(textRequest('who am i'))),
      metadata,
      credentials,
    );
    expect(sent.error).toBeUndefined();
    expect(runner.calls.slice(before).map((call) => call.principal)).toEqual([
      expect.objectContaining({ kind: 'caller', id: 'certified' }),
    ]);
  });

  it('refuses a plaintext client and one without a client certificate in the handshake', async () => {
    expect((await getTask(grpc.credentials.createInsecure())).error?.code).toBe(grpc.status.UNAVAILABLE);
    expect((await getTask(grpc.credentials.createSsl(fs.readFileSync(ca.cert)))).error?.code).toBe(
      grpc.status.UNAVAILABLE,
    );
  });
});

describe('the gRPC binding when the node’s database does not answer', () => {
  let node: A2ATestNode;
  beforeAll(async () => {
    const down = new Error('connect ECONNREFUSED 10.0.0.7:5432');
    // Rows that fail every read, as a database that went away does; the health says so.
    const tasks = {
      write: async () => undefined,
      get: async () => Promise.reject(down),
      claim: async () => Promise.reject(down),
      list: async () => Promise.reject(down),
      failInterrupted: async () => 0,
      purgeFinished: async () => 0,
      countByState: async () => ({}),
    };
    node = await startA2ANode({
      grpc: true,
      extra: {
        health: async () => ({ ok: false, problem: 'unavailable' }),
        taskRows: { tasks, pushConfigs: {} } as never,
      },
    });
  });
  afterAll(() => node.close());

  it('answers UNAVAILABLE with the STORAGE_UNAVAILABLE ErrorInfo, never the driver’s text', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('a2a-version', '1.0');
    const answer = await rawCall(
      node.grpcAddress!,
      'GetTask',
      Buffer.from(A2AService.getTask.requestSerialize({ tenant: '', id: 'any', historyLength: undefined })),
      metadata,
    );
    expect(answer.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(answer.error?.details).not.toMatch(/10\.0\.0\.7|ECONNREFUSED/);
    expect(detailsOf(answer.error!).reason).toBe('STORAGE_UNAVAILABLE');
  });
});
