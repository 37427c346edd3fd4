import { TaskState } from '@a2a-js/sdk';
import { a2aClient, answerText, asTask, textRequest } from '../support/a2aClient';
import { rawPost, startA2ANode, type A2ATestNode } from '../support/a2aServer';
import type { ScriptedA2ARunner } from '../support/a2aRunner';

const V1 = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
const rpc = (method: string, params?: unknown, id: unknown = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const message = (fields: Record<string, unknown>) => ({
  message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }], ...fields },
});

interface Case {
  name: string;
  /** Path under the node (default `/`: JSON-RPC). */
  path?: string;
  method?: 'GET' | 'POST';
  body?: string | (() => string);
  headers?: Record<string, string>;
  status: number;
  /** JSON-RPC error code (JSON-RPC cases). */
  code?: number;
  /** The error message must match (names the field). */
  says?: RegExp;
  /** The field a google.rpc.BadRequest among the error's details must name (§9.5, §11.6). */
  field?: string;
}

let node: A2ATestNode;
let completedTaskId = '';

const cases: Case[] = [
  { name: 'malformed JSON', body: '{"jsonrpc": "2.0", "method": ', status: 200, code: -32700 },
  { name: 'a JSON string instead of an object', body: '"SendMessage"', status: 200, code: -32600 },
  { name: 'an empty batch array', body: '[]', status: 200, code: -32600 },
  {
    name: 'no jsonrpc member',
    body: JSON.stringify({ id: 1, method: 'GetTask', params: { id: 'x' } }),
    status: 200,
    code: -32600,
  },
  {
    name: 'jsonrpc 1.0',
    body: JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'GetTask', params: { id: 'x' } }),
    status: 200,
    code: -32600,
  },
  { name: 'no method', body: JSON.stringify({ jsonrpc: '2.0', id: 1, params: {} }), status: 200, code: -32600 },
  { name: 'a numeric method', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 42 }), status: 200, code: -32600 },
  { name: 'an object id', body: rpc('GetTask', { id: 'x' }, { a: 1 }), status: 200, code: -32600 },
  { name: 'an unknown method', body: rpc('DoMagic', {}), status: 200, code: -32601 },
  {
    name: 'params that are a string',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: 'x' }),
    status: 200,
    code: -32600,
    says: /params/,
  },
  { name: 'SendMessage without params', body: rpc('SendMessage'), status: 200, code: -32602 },
  { name: 'SendMessage without a message', body: rpc('SendMessage', {}), status: 200, code: -32602, says: /message/ },
  {
    name: 'SendMessage with empty parts',
    body: rpc('SendMessage', message({ parts: [] })),
    status: 200,
    code: -32602,
    says: /message\.parts/,
    field: 'message.parts',
  },
  {
    name: 'SendMessage with an unknown part kind',
    body: rpc('SendMessage', message({ parts: [{ video: 'x' }] })),
    status: 200,
    code: -32602,
    says: /message\.parts\[0\]/,
    field: 'message.parts[0]',
  },
  {
    name: 'SendMessage without messageId',
    body: rpc('SendMessage', message({ messageId: undefined })),
    status: 200,
    code: -32602,
    says: /messageId/,
  },
  {
    name: 'SendMessage without a role',
    body: rpc('SendMessage', message({ role: undefined })),
    status: 200,
    code: -32602,
    says: /role/,
  },
  {
    name: 'SendMessage to an unknown task',
    body: rpc('SendMessage', message({ taskId: 'no-such-task' })),
    status: 200,
    code: -32001,
  },
  {
    name: 'SendMessage with a negative historyLength',
    body: rpc('SendMessage', { ...message({}), configuration: { historyLength: -1 } }),
    status: 200,
    code: -32602,
    says: /historyLength/,
    field: 'configuration.historyLength',
  },
  {
    name: 'GetTask with a negative historyLength',
    body: () => rpc('GetTask', { id: completedTaskId, historyLength: -3 }),
    status: 200,
    code: -32602,
    says: /historyLength/,
    field: 'historyLength',
  },
  { name: 'GetTask without an id', body: rpc('GetTask', {}), status: 200, code: -32602 },
  { name: 'GetTask of an unknown task', body: rpc('GetTask', { id: 'no-such-task' }), status: 200, code: -32001 },
  { name: 'CancelTask of an unknown task', body: rpc('CancelTask', { id: 'no-such-task' }), status: 200, code: -32001 },
  {
    name: 'CancelTask of a completed task',
    body: () => rpc('CancelTask', { id: completedTaskId }),
    status: 200,
    code: -32002,
  },
  {
    name: 'ListTasks with pageSize 0',
    body: rpc('ListTasks', { pageSize: 0 }),
    status: 200,
    code: -32602,
    says: /pageSize/,
    field: 'pageSize',
  },
  {
    name: 'SubscribeToTask of a finished task',
    body: () => rpc('SubscribeToTask', { id: completedTaskId }),
    status: 200,
    code: -32004,
  },
  {
    name: 'a push config with a file: URL',
    body: () =>
      rpc('CreateTaskPushNotificationConfig', { taskId: completedTaskId, id: 'h', url: 'file:///etc/passwd' }),
    status: 200,
    code: -32602,
    says: /url/,
    field: 'url',
  },
  {
    name: 'a push config with no URL',
    body: () => rpc('CreateTaskPushNotificationConfig', { taskId: completedTaskId, id: 'h' }),
    status: 200,
    code: -32602,
    says: /url/,
    field: 'url',
  },
  {
    name: 'GetTaskPushNotificationConfig that does not exist',
    body: () => rpc('GetTaskPushNotificationConfig', { taskId: completedTaskId, id: 'nope' }),
    status: 200,
    code: -32001,
  },
  {
    name: 'GetExtendedAgentCard with no auth configured',
    body: rpc('GetExtendedAgentCard', {}),
    status: 200,
    code: -32004,
  },
  {
    name: 'an unsupported A2A-Version',
    body: rpc('GetTask', { id: 'x' }),
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '9.9' },
    status: 200,
    code: -32009,
  },
  {
    name: 'a text/plain body',
    body: rpc('GetTask', { id: 'x' }),
    headers: { 'Content-Type': 'text/plain', 'A2A-Version': '1.0' },
    status: 200,
    code: -32005,
  },
  {
    name: 'a body over the size limit',
    body: () => rpc('SendMessage', message({ parts: [{ text: 'x'.repeat(200_000) }] })),
    status: 413,
  },
  {
    name: 'v0.3 message/send with empty parts',
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { kind: 'message', messageId: 'm', role: 'user', parts: [] } },
    }),
    headers: { 'Content-Type': 'application/json' },
    status: 200,
    code: -32602,
    says: /parts/,
  },
  {
    name: 'v0.3 unknown method',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/explode', params: {} }),
    headers: { 'Content-Type': 'application/json' },
    status: 200,
    code: -32601,
  },
  {
    name: 'v0.3 malformed JSON',
    body: '{oops',
    headers: { 'Content-Type': 'application/json' },
    status: 200,
    code: -32700,
  },
  { name: 'REST: malformed JSON to message:send', path: '/message:send', body: '{', status: 400 },
  {
    name: 'REST: empty parts',
    path: '/message:send',
    body: JSON.stringify(message({ parts: [] })),
    status: 400,
    says: /message\.parts/,
    field: 'message.parts',
  },
  { name: 'REST: unknown task', path: '/tasks/no-such-task', method: 'GET', status: 404 },
  {
    name: 'REST: a body over the size limit',
    path: '/message:send',
    body: () => JSON.stringify(message({ parts: [{ text: 'y'.repeat(300_000) }] })),
    status: 413,
  },
  { name: 'an unknown path', path: '/no/such/path', method: 'GET', status: 404 },
];

beforeAll(async () => {
  node = await startA2ANode();
  const client = await a2aClient(node.url, 'JSONRPC');
  completedTaskId = asTask(await client.sendMessage(textRequest('done already'))).id;
});
afterAll(() => node.close());

describe('bad requests never reach the agent and get JSON errors, never HTML or stack traces', () => {
  it.each(cases)('refuses $name', async (c) => {
    const runner = node.runner as ScriptedA2ARunner;
    const callsBefore = runner.calls.length;
    const body = typeof c.body === 'function' ? c.body() : c.body;
    const headers = c.headers ?? V1;
    const response =
      (c.method ?? 'POST') === 'GET'
        ? await fetch(`${node.url}${c.path ?? '/'}`, { headers }).then(async (r) => ({
            status: r.status,
            headers: r.headers,
            text: await r.text(),
          }))
        : await rawPost(`${node.url}${c.path ?? '/'}`, body ?? '', headers);
    expect(response.status).toBe(c.status);
    expect(response.headers.get('content-type') ?? '').toMatch(/json/);
    expect(response.text).not.toMatch(/<html|<pre>|\bat [\w.<>]+ \(.*:\d+:\d+\)/i);
    const parsed = JSON.parse(response.text);
    if (c.code !== undefined) expect(parsed.error?.code).toBe(c.code);
    else expect(parsed.error).toBeDefined();
    if (c.says) expect(JSON.stringify(parsed.error)).toMatch(c.says);
    // v1.0.1: every detail object is typed (§3.3.2); invalid params name their field in a BadRequest.
    const details: unknown = parsed.error?.data ?? parsed.error?.details;
    if (details !== undefined) {
      expect(Array.isArray(details)).toBe(true);
      for (const detail of details as Array<Record<string, unknown>>) expect(typeof detail['@type']).toBe('string');
    }
    if (c.field) {
      expect(details).toEqual(
        expect.arrayContaining([
          {
            '@type': 'type.googleapis.com/google.rpc.BadRequest',
            fieldViolations: [{ field: c.field, description: expect.any(String) }],
          },
        ]),
      );
    }
    expect(runner.calls.length).toBe(callsBefore);
  });

  it('still serves a good request after all of them', async () => {
    const client = await a2aClient(node.url, 'JSONRPC');
    const task = asTask(await client.sendMessage(textRequest('still alive')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(task)).toBe('echo: still alive');
  });
});
