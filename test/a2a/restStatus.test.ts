import {
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  InvalidAgentResponseError,
  PushNotificationNotSupportedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  VersionNotSupportedError,
  type A2AError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { bindingsFor } from '../support/inboundListener';
import { a2aClient, asTask, textRequest } from '../support/a2aClient';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { inProcess, type InProcessResponse } from '../support/inProcess';

const V1 = { 'A2A-Version': '1.0' };
const reasonOf = (body: unknown) => (body as { error: { details: Array<{ reason: string }> } }).error.details[0].reason;

/** Every A2A error with the HTTP status, gRPC status and reason of the v1.0.1 specification's table (§5.4, §11.6). */
const table: Array<{ error: () => A2AError; status: number; reason: string; grpc: string }> = [
  { error: () => new TaskNotFoundError(), status: 404, reason: 'TASK_NOT_FOUND', grpc: 'NOT_FOUND' },
  {
    error: () => new TaskNotCancelableError(),
    status: 400,
    reason: 'TASK_NOT_CANCELABLE',
    grpc: 'FAILED_PRECONDITION',
  },
  {
    error: () => new PushNotificationNotSupportedError(),
    status: 400,
    reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
    grpc: 'FAILED_PRECONDITION',
  },
  {
    error: () => new UnsupportedOperationError(),
    status: 400,
    reason: 'UNSUPPORTED_OPERATION',
    grpc: 'FAILED_PRECONDITION',
  },
  {
    error: () => new ContentTypeNotSupportedError(),
    status: 400,
    reason: 'CONTENT_TYPE_NOT_SUPPORTED',
    grpc: 'INVALID_ARGUMENT',
  },
  { error: () => new InvalidAgentResponseError(), status: 500, reason: 'INVALID_AGENT_RESPONSE', grpc: 'INTERNAL' },
  {
    error: () => new ExtendedAgentCardNotConfiguredError(),
    status: 400,
    reason: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
    grpc: 'FAILED_PRECONDITION',
  },
  {
    error: () => new ExtensionSupportRequiredError(),
    status: 400,
    reason: 'EXTENSION_SUPPORT_REQUIRED',
    grpc: 'FAILED_PRECONDITION',
  },
  {
    error: () => new VersionNotSupportedError(),
    status: 400,
    reason: 'VERSION_NOT_SUPPORTED',
    grpc: 'FAILED_PRECONDITION',
  },
];

/** A request handler whose GetTask throws the error named by the task id (the table's reason). */
function throwingHandler(): A2ARequestHandler {
  const card = {
    name: 'errors',
    supportedInterfaces: [{ url: 'http://127.0.0.1/', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }],
  };
  const refuse = () => Promise.reject(new UnsupportedOperationError());
  return new Proxy({} as A2ARequestHandler, {
    get: (_target, name) => {
      if (name === 'getAgentCard') return async () => card;
      if (name === 'getTask')
        return async (params: { id: string }) => {
          const row = table.find((t) => t.reason === params.id);
          throw row ? row.error() : new TaskNotFoundError();
        };
      return refuse;
    },
  });
}

describe('HTTP+JSON errors carry the status of the v1.0.1 table', () => {
  // The node's own HTTP+JSON binding over a handler that throws each error.
  const call = inProcess(bindingsFor(throwingHandler()));

  it.each(table)('answers $reason with HTTP $status', async ({ status, reason, grpc }) => {
    const response = await call(`/tasks/${reason}`, { headers: V1 });
    expect(response.status).toBe(status);
    const body = response.json();
    expect(body.error.code).toBe(status);
    expect(body.error.status).toBe(grpc);
    expect(body.error.details[0]).toMatchObject({ reason, domain: 'a2a-protocol.org' });
  });
});

describe('the node over HTTP+JSON', () => {
  let node: A2ATestNode;
  let completedTaskId = '';
  beforeAll(async () => {
    node = await startA2ANode();
    const client = await a2aClient(node.url, 'JSONRPC');
    completedTaskId = asTask(await client.sendMessage(textRequest('done already'))).id;
  });
  afterAll(() => node.close());

  // Raw requests need no port: the node's express app answers them in process.
  const get = (path: string, headers: Record<string, string> = {}): Promise<InProcessResponse> =>
    inProcess(node.a2a.app)(path, { headers: { ...V1, ...headers } });
  const post = (path: string, body: string, headers: Record<string, string> = {}): Promise<InProcessResponse> =>
    inProcess(node.a2a.app)(path, {
      method: 'POST',
      headers: { ...V1, 'Content-Type': 'application/json', ...headers },
      body,
    });

  it('answers a task it does not know with 404 TASK_NOT_FOUND', async () => {
    const response = await get('/tasks/no-such-task');
    expect(response.status).toBe(404);
    expect(reasonOf(response.json())).toBe('TASK_NOT_FOUND');
  });

  it('answers a cancel of a completed task with 400 TASK_NOT_CANCELABLE', async () => {
    const response = await post(`/tasks/${completedTaskId}:cancel`, '{}');
    expect(response.status).toBe(400);
    expect(reasonOf(response.json())).toBe('TASK_NOT_CANCELABLE');
  });

  it('answers a text/plain body with 400 CONTENT_TYPE_NOT_SUPPORTED', async () => {
    const response = await post('/message:send', 'hello', { 'Content-Type': 'text/plain' });
    expect(response.status).toBe(400);
    expect(reasonOf(response.json())).toBe('CONTENT_TYPE_NOT_SUPPORTED');
  });

  it('answers a subscription to a finished task with 400 UNSUPPORTED_OPERATION', async () => {
    const response = await get(`/tasks/${completedTaskId}:subscribe`);
    expect(response.status).toBe(400);
    expect(reasonOf(response.json())).toBe('UNSUPPORTED_OPERATION');
  });

  it('answers an unknown A2A-Version with 400 VERSION_NOT_SUPPORTED', async () => {
    const response = await get('/tasks/no-such-task', { 'A2A-Version': '9.9' });
    expect(response.status).toBe(400);
    expect(reasonOf(response.json())).toBe('VERSION_NOT_SUPPORTED');
  });

  it('says application/json unless Accept asks for application/a2a+json', async () => {
    const plain = await get(`/tasks/${completedTaskId}`);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toMatch(/^application\/json/);
    const asked = await get(`/tasks/${completedTaskId}`, { Accept: 'application/a2a+json' });
    expect(asked.headers['content-type']).toMatch(/^application\/a2a\+json/);
    expect(asked.json().id).toBe(completedTaskId);
    const error = await get('/tasks/no-such-task', { Accept: 'application/a2a+json, application/json;q=0.5' });
    expect(error.headers['content-type']).toMatch(/^application\/a2a\+json/);
  });

  it('accepts application/a2a+json request bodies on every HTTP+JSON post', async () => {
    const a2aJson = { 'Content-Type': 'application/a2a+json' };
    const sent = await post(
      '/message:send',
      JSON.stringify({ message: { messageId: 'a2a-json-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } }),
      a2aJson,
    );
    expect(sent.status).toBe(200);
    const taskId = (sent.json() as { task: { id: string } }).task.id;
    const config = await post(
      `/tasks/${taskId}/pushNotificationConfigs`,
      JSON.stringify({ taskId, url: 'https://example.com/hook' }),
      a2aJson,
    );
    expect([200, 201]).toContain(config.status);
    const cancel = await post(`/tasks/${taskId}:cancel`, '{}', a2aJson);
    expect(cancel.status).toBe(400);
    expect(reasonOf(cancel.json())).toBe('TASK_NOT_CANCELABLE');
  });

  it('names the field of invalid params in a google.rpc.BadRequest (§11.6)', async () => {
    const badMessage = await post(
      '/message:send',
      JSON.stringify({ message: { messageId: 'm-bad', role: 'ROLE_USER', parts: [] } }),
    );
    expect(badMessage.status).toBe(400);
    expect(badMessage.json().error.details).toEqual([
      expect.objectContaining({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'INVALID_PARAMS' }),
      {
        '@type': 'type.googleapis.com/google.rpc.BadRequest',
        fieldViolations: [{ field: 'message.parts', description: 'must contain at least one part' }],
      },
    ]);
    // A check of the node's handler, past the message guard: the same shape.
    const agentRole = await post(
      '/message:send',
      JSON.stringify({ message: { messageId: 'm-agent', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] } }),
    );
    expect(agentRole.status).toBe(400);
    expect(agentRole.json().error.details[1]).toEqual({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: 'message.role', description: 'must be ROLE_USER (a message from the caller)' }],
    });
  });

  it('lets the SDK client read the new statuses as the right error', async () => {
    const client = await a2aClient(node.url, 'HTTP+JSON');
    await expect(client.cancelTask({ id: completedTaskId, tenant: '', metadata: undefined })).rejects.toBeInstanceOf(
      TaskNotCancelableError,
    );
    await expect(client.getTask({ id: 'no-such-task', tenant: '', historyLength: 0 })).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
  });
});

describe('the node over v0.3 HTTP+JSON (legacyCompat) answers with the same statuses', () => {
  let node: A2ATestNode;
  let completedTaskId = '';
  beforeAll(async () => {
    node = await startA2ANode();
    const client = await a2aClient(node.url, 'JSONRPC');
    completedTaskId = asTask(await client.sendMessage(textRequest('done already'))).id;
  });
  afterAll(() => node.close());

  const v03 = { 'A2A-Version': '0.3' };
  const call = (path: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}) =>
    inProcess(node.a2a.app)(path, {
      ...init,
      headers: { ...v03, 'Content-Type': 'application/json', ...init.headers },
    });

  it('answers a cancel of a completed task with 400 and code -32002', async () => {
    const response = await call(`/v1/tasks/${completedTaskId}:cancel`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({ code: -32002 });
  });

  it('answers a task it does not know with 404 and code -32001', async () => {
    const response = await call('/v1/tasks/no-such-task');
    expect(response.status).toBe(404);
    expect(response.json()).toMatchObject({ code: -32001 });
  });

  it('lets the v0.3 SDK client read a 400 -32002 as not cancelable', async () => {
    const { RestTransport } = await import('@a2a-js/sdk-v03/client');
    const transport = new RestTransport({ endpoint: node.url });
    await expect(transport.cancelTask({ id: completedTaskId })).rejects.toThrow(/not cancelable/i);
  });
});
