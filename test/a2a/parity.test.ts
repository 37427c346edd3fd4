import * as grpc from '@grpc/grpc-js';
import { decodeErrorInfo, decodeStatus, GRPC_STATUS_DETAILS_BIN } from '@a2a-js/sdk/errors/grpc';
import { a2aClient, asTask, textRequest } from '../support/a2aClient';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { grpcCall, type GrpcAnswer } from '../support/grpcCall';
import { inProcess, type InProcessRequest, type InProcessResponse } from '../support/inProcess';

/**
 * Every A2A method on every binding — JSON-RPC v1.0, HTTP+JSON, gRPC, and
 * JSON-RPC v0.3 where the method exists there — with each error a caller
 * can cause: the same outcome and the same error semantics on each (the HTTP
 * bindings answered in process, gRPC over loopback with the JSON-RPC case's
 * params as its request message), and the inbound chain's own refusals
 * (credentials, Host, Origin, body size, body shape) the same whichever
 * binding a request came in on.
 */

type Binding = 'jsonrpc' | 'rest' | 'v03';
/** One request as a binding spells it. */
type Spelled = { path: string } & InProcessRequest;
/** What a case needs to know: the completed task its requests can name. */
interface Known {
  done: string;
}

const V1 = { 'A2A-Version': '1.0' };
const JSON_V1 = { ...V1, 'Content-Type': 'application/json' };
const V03 = { 'Content-Type': 'application/json' };

const rpc = (method: string, params: unknown, headers: Record<string, string> = JSON_V1): Spelled => ({
  path: '/',
  method: 'POST',
  headers,
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
});
const v03 = (method: string, params: unknown) => rpc(method, params, V03);
const rest = (method: string, path: string, body?: unknown): Spelled => ({
  path,
  method,
  headers: body === undefined ? V1 : JSON_V1,
  body: body === undefined ? undefined : JSON.stringify(body),
});

const messageV1 = (fields: Record<string, unknown> = {}) => ({
  message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'hello' }], ...fields },
});
const messageV03 = (fields: Record<string, unknown> = {}) => ({
  message: {
    kind: 'message',
    messageId: `m-${Math.random()}`,
    role: 'user',
    parts: [{ kind: 'text', text: 'hello' }],
    ...fields,
  },
});
const hook = { id: 'hook', url: 'http://127.0.0.1:9/hook' };

/** A method with one error case (or success), spelled on each binding it exists on, and the outcome every one must give. */
interface Case {
  method: string;
  what: string;
  expected: string;
  on: Partial<Record<Binding, (known: Known) => Spelled>>;
}

const cases: Case[] = [
  {
    method: 'SendMessage',
    what: 'a greeting',
    expected: 'task completed',
    on: {
      jsonrpc: () => rpc('SendMessage', messageV1()),
      rest: () => rest('POST', '/message:send', messageV1()),
      v03: () => v03('message/send', messageV03()),
    },
  },
  {
    method: 'SendMessage',
    what: 'a message without parts',
    expected: 'error MALFORMED',
    on: {
      jsonrpc: () => rpc('SendMessage', messageV1({ parts: [] })),
      rest: () => rest('POST', '/message:send', messageV1({ parts: [] })),
      v03: () => v03('message/send', messageV03({ parts: [] })),
    },
  },
  {
    method: 'SendMessage',
    what: 'a message to an unknown task',
    expected: 'error TASK_NOT_FOUND',
    on: {
      jsonrpc: () => rpc('SendMessage', messageV1({ taskId: 'no-such-task' })),
      rest: () => rest('POST', '/message:send', messageV1({ taskId: 'no-such-task' })),
      v03: () => v03('message/send', messageV03({ taskId: 'no-such-task' })),
    },
  },
  {
    method: 'SendMessage',
    what: 'a message to a finished task',
    expected: 'error UNSUPPORTED_OPERATION',
    on: {
      jsonrpc: (k) => rpc('SendMessage', messageV1({ taskId: k.done })),
      rest: (k) => rest('POST', '/message:send', messageV1({ taskId: k.done })),
      v03: (k) => v03('message/send', messageV03({ taskId: k.done })),
    },
  },
  {
    method: 'SendStreamingMessage',
    what: 'a greeting',
    expected: 'stream task … completed',
    on: {
      jsonrpc: () => rpc('SendStreamingMessage', messageV1()),
      rest: () => rest('POST', '/message:stream', messageV1()),
      v03: () => v03('message/stream', messageV03()),
    },
  },
  {
    method: 'SendStreamingMessage',
    what: 'a message without parts',
    expected: 'error MALFORMED',
    on: {
      jsonrpc: () => rpc('SendStreamingMessage', messageV1({ parts: [] })),
      rest: () => rest('POST', '/message:stream', messageV1({ parts: [] })),
      v03: () => v03('message/stream', messageV03({ parts: [] })),
    },
  },
  {
    method: 'GetTask',
    what: 'a finished task',
    expected: 'task completed',
    on: {
      jsonrpc: (k) => rpc('GetTask', { id: k.done }),
      rest: (k) => rest('GET', `/tasks/${k.done}`),
      v03: (k) => v03('tasks/get', { id: k.done }),
    },
  },
  {
    method: 'GetTask',
    what: 'an unknown task',
    expected: 'error TASK_NOT_FOUND',
    on: {
      jsonrpc: () => rpc('GetTask', { id: 'no-such-task' }),
      rest: () => rest('GET', '/tasks/no-such-task'),
      v03: () => v03('tasks/get', { id: 'no-such-task' }),
    },
  },
  {
    method: 'GetTask',
    what: 'a negative historyLength',
    expected: 'error MALFORMED',
    on: {
      jsonrpc: (k) => rpc('GetTask', { id: k.done, historyLength: -1 }),
      rest: (k) => rest('GET', `/tasks/${k.done}?historyLength=-1`),
      v03: (k) => v03('tasks/get', { id: k.done, historyLength: -1 }),
    },
  },
  {
    method: 'ListTasks',
    what: 'the first page',
    expected: 'list',
    on: { jsonrpc: () => rpc('ListTasks', {}), rest: () => rest('GET', '/tasks') },
  },
  {
    method: 'ListTasks',
    what: 'a page size of 0',
    expected: 'error MALFORMED',
    on: { jsonrpc: () => rpc('ListTasks', { pageSize: 0 }), rest: () => rest('GET', '/tasks?pageSize=0') },
  },
  {
    method: 'CancelTask',
    what: 'an unknown task',
    expected: 'error TASK_NOT_FOUND',
    on: {
      jsonrpc: () => rpc('CancelTask', { id: 'no-such-task' }),
      rest: () => rest('POST', '/tasks/no-such-task:cancel', {}),
      v03: () => v03('tasks/cancel', { id: 'no-such-task' }),
    },
  },
  {
    method: 'CancelTask',
    what: 'a finished task',
    expected: 'error TASK_NOT_CANCELABLE',
    on: {
      jsonrpc: (k) => rpc('CancelTask', { id: k.done }),
      rest: (k) => rest('POST', `/tasks/${k.done}:cancel`, {}),
      v03: (k) => v03('tasks/cancel', { id: k.done }),
    },
  },
  {
    method: 'SubscribeToTask',
    what: 'an unknown task',
    expected: 'error TASK_NOT_FOUND',
    on: {
      jsonrpc: () => rpc('SubscribeToTask', { id: 'no-such-task' }),
      rest: () => rest('GET', '/tasks/no-such-task:subscribe'),
      v03: () => v03('tasks/resubscribe', { id: 'no-such-task' }),
    },
  },
  {
    method: 'SubscribeToTask',
    what: 'a finished task',
    expected: 'error UNSUPPORTED_OPERATION',
    on: {
      jsonrpc: (k) => rpc('SubscribeToTask', { id: k.done }),
      rest: (k) => rest('GET', `/tasks/${k.done}:subscribe`),
      v03: (k) => v03('tasks/resubscribe', { id: k.done }),
    },
  },
  {
    method: 'CreateTaskPushNotificationConfig',
    what: 'a webhook on a finished task',
    expected: 'push config hook',
    on: {
      jsonrpc: (k) => rpc('CreateTaskPushNotificationConfig', { taskId: k.done, ...hook }),
      rest: (k) => rest('POST', `/tasks/${k.done}/pushNotificationConfigs`, hook),
      v03: (k) => v03('tasks/pushNotificationConfig/set', { taskId: k.done, pushNotificationConfig: hook }),
    },
  },
  {
    method: 'CreateTaskPushNotificationConfig',
    what: 'a file: URL',
    expected: 'error MALFORMED',
    on: {
      jsonrpc: (k) => rpc('CreateTaskPushNotificationConfig', { taskId: k.done, id: 'f', url: 'file:///etc/passwd' }),
      rest: (k) => rest('POST', `/tasks/${k.done}/pushNotificationConfigs`, { id: 'f', url: 'file:///etc/passwd' }),
      v03: (k) =>
        v03('tasks/pushNotificationConfig/set', {
          taskId: k.done,
          pushNotificationConfig: { id: 'f', url: 'file:///x' },
        }),
    },
  },
  {
    method: 'CreateTaskPushNotificationConfig',
    what: 'an unknown task',
    expected: 'error TASK_NOT_FOUND',
    on: {
      jsonrpc: () => rpc('CreateTaskPushNotificationConfig', { taskId: 'no-such-task', ...hook }),
      rest: () => rest('POST', '/tasks/no-such-task/pushNotificationConfigs', hook),
      v03: () => v03('tasks/pushNotificationConfig/set', { taskId: 'no-such-task', pushNotificationConfig: hook }),
    },
  },
  {
    method: 'GetTaskPushNotificationConfig',
    what: 'the webhook set above',
    expected: 'push config hook',
    on: {
      jsonrpc: (k) => rpc('GetTaskPushNotificationConfig', { taskId: k.done, id: 'hook' }),
      rest: (k) => rest('GET', `/tasks/${k.done}/pushNotificationConfigs/hook`),
      v03: (k) => v03('tasks/pushNotificationConfig/get', { id: k.done, pushNotificationConfigId: 'hook' }),
    },
  },
  {
    method: 'GetTaskPushNotificationConfig',
    what: 'a config that does not exist',
    expected: 'error TASK_NOT_FOUND',
    on: {
      jsonrpc: (k) => rpc('GetTaskPushNotificationConfig', { taskId: k.done, id: 'nope' }),
      rest: (k) => rest('GET', `/tasks/${k.done}/pushNotificationConfigs/nope`),
      v03: (k) => v03('tasks/pushNotificationConfig/get', { id: k.done, pushNotificationConfigId: 'nope' }),
    },
  },
  {
    method: 'ListTaskPushNotificationConfigs',
    what: 'the webhooks of a task',
    expected: 'push configs hook',
    on: {
      jsonrpc: (k) => rpc('ListTaskPushNotificationConfigs', { taskId: k.done }),
      rest: (k) => rest('GET', `/tasks/${k.done}/pushNotificationConfigs`),
      v03: (k) => v03('tasks/pushNotificationConfig/list', { id: k.done }),
    },
  },
  {
    method: 'DeleteTaskPushNotificationConfig',
    what: 'an unknown task',
    expected: 'error TASK_NOT_FOUND',
    on: {
      jsonrpc: () => rpc('DeleteTaskPushNotificationConfig', { taskId: 'no-such-task', id: 'hook' }),
      rest: () => rest('DELETE', '/tasks/no-such-task/pushNotificationConfigs/hook'),
      v03: () => v03('tasks/pushNotificationConfig/delete', { id: 'no-such-task', pushNotificationConfigId: 'hook' }),
    },
  },
  {
    method: 'GetExtendedAgentCard',
    what: 'a node without credentials (it has no extended card: UnsupportedOperation)',
    expected: 'error UNSUPPORTED_OPERATION',
    on: {
      jsonrpc: () => rpc('GetExtendedAgentCard', {}),
      rest: () => rest('GET', '/extendedAgentCard'),
      v03: () => v03('agent/getAuthenticatedExtendedCard', {}),
    },
  },
];

/** JSON-RPC codes (v1.0 and v0.3 share them) as the A2A reasons REST bodies carry; request-shape codes are one. */
const RPC_REASONS: Record<number, string> = {
  [-32001]: 'TASK_NOT_FOUND',
  [-32002]: 'TASK_NOT_CANCELABLE',
  [-32003]: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
  [-32004]: 'UNSUPPORTED_OPERATION',
  [-32005]: 'CONTENT_TYPE_NOT_SUPPORTED',
  [-32007]: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  [-32009]: 'VERSION_NOT_SUPPORTED',
  [-32700]: 'MALFORMED',
  [-32600]: 'MALFORMED',
  [-32602]: 'MALFORMED',
};
/** HTTP statuses the inbound chain refuses with on every binding. */
const REFUSALS: Record<number, string> = {
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  413: 'TOO_LARGE',
  421: 'MISDIRECTED',
};

const stateOf = (state: unknown) =>
  String(state)
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace('_', '-');

/** What an answer means, whatever the binding wrote it as. */
function outcome(response: InProcessResponse): string {
  if (REFUSALS[response.status]) return `refused ${REFUSALS[response.status]}`;
  if (String(response.headers['content-type']).startsWith('text/event-stream')) {
    const events = response.text
      .split('\n\n')
      .filter((frame) => frame.includes('data: '))
      .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as Record<string, any>);
    const first = events[0]!;
    if (first.error) return `error ${RPC_REASONS[first.error.code as number] ?? first.error.code}`;
    const results = events.map((e) => e.result ?? e);
    const firstKind = results[0].task || results[0].kind === 'task' ? 'task' : 'event';
    const last = results[results.length - 1];
    const state = last.statusUpdate?.status?.state ?? last.status?.state;
    return `stream ${firstKind} … ${stateOf(state)}`;
  }
  const body = response.json() as Record<string, any>;
  const error = body.error ?? (body.jsonrpc ? undefined : body.code !== undefined ? body : undefined);
  if (error) {
    if (typeof error.code === 'number' && error.code < 0) return `error ${RPC_REASONS[error.code] ?? error.code}`;
    const reason = (error.details as Array<{ reason: string }> | undefined)?.[0]?.reason;
    return `error ${reason === 'INVALID_PARAMS' || (response.status === 400 && !reason) ? 'MALFORMED' : reason}`;
  }
  const result = body.jsonrpc ? body.result : body;
  const task = result.task ?? (result.kind === 'task' || result.status ? result : undefined);
  if (task) return `task ${stateOf(task.status.state)}`;
  if (Array.isArray(result.tasks)) return 'list';
  const configs = result.configs ?? (Array.isArray(result) ? result : undefined);
  if (configs) return `push configs ${configs.map((c: any) => c.id ?? c.pushNotificationConfig?.id).join(',')}`;
  if (result.url || result.pushNotificationConfig)
    return `push config ${result.id ?? result.pushNotificationConfig.id}`;
  return JSON.stringify(result).slice(0, 80);
}

let node: A2ATestNode;
let guarded: A2ATestNode;
const known: Known = { done: '' };
const MAX_BODY = 4096;

beforeAll(async () => {
  node = await startA2ANode({ grpc: true, config: { a2a: { maxBodyBytes: MAX_BODY } } });
  guarded = await startA2ANode({
    grpc: true,
    config: { a2a: { maxBodyBytes: MAX_BODY, auth: { bearerTokens: ['parity-token-0123456789'] } } },
  });
  known.done = asTask(await (await a2aClient(node.url, 'JSONRPC')).sendMessage(textRequest('done already'))).id;
});
afterAll(async () => {
  await node?.close();
  await guarded?.close();
});

const ask = (target: A2ATestNode, spelled: Spelled) => {
  const { path, ...request } = spelled;
  return inProcess(target.a2a.app)(path, request);
};

describe('every A2A method gives the same outcome on every binding', () => {
  const rows = cases.flatMap((c) =>
    (Object.keys(c.on) as Binding[]).map((binding) => ({ ...c, binding, spell: c.on[binding]! })),
  );
  it.each(rows)('$method, $what, on $binding: $expected', async ({ spell, expected }) => {
    expect(outcome(await ask(node, spell(known)))).toBe(expected);
  });
});

describe('GetExtendedAgentCard with credentials configured', () => {
  const spelled: Record<Binding, Spelled> = {
    jsonrpc: rpc('GetExtendedAgentCard', {}),
    rest: rest('GET', '/extendedAgentCard'),
    v03: v03('agent/getAuthenticatedExtendedCard', {}),
  };
  it.each(Object.keys(spelled) as Binding[])('%s: the extended card, by name', async (binding) => {
    const answer = await ask(
      guarded,
      withHeaders(spelled[binding], { Authorization: 'Bearer parity-token-0123456789' }),
    );
    expect(answer.status).toBe(200);
    const body = answer.json();
    expect((body.result ?? body).name).toBe('lango-orchestrator');
  });
});

/** One request per binding, for the chain's own refusals. */
const anyRequest: Record<Binding, () => Spelled> = {
  jsonrpc: () => rpc('GetTask', { id: 'x' }),
  rest: () => rest('POST', '/message:send', messageV1()),
  v03: () => v03('tasks/get', { id: 'x' }),
};
const bindings = Object.keys(anyRequest) as Binding[];
const withHeaders = (spelled: Spelled, headers: Record<string, string>): Spelled => ({
  ...spelled,
  headers: { ...spelled.headers, ...headers },
});

describe('the inbound chain refuses the same on every binding', () => {
  it.each(bindings)('%s: no credential → 401 with a challenge', async (binding) => {
    const answer = await ask(guarded, anyRequest[binding]());
    expect(outcome(answer)).toBe('refused UNAUTHENTICATED');
    expect(answer.headers['www-authenticate']).toMatch(/^Bearer/);
    const admitted = await ask(
      guarded,
      withHeaders(anyRequest[binding](), { Authorization: 'Bearer parity-token-0123456789' }),
    );
    expect(admitted.status).not.toBe(401);
  });

  it.each(bindings)('%s: a Host that is not this node → 421, the connection closed', async (binding) => {
    const answer = await ask(node, withHeaders(anyRequest[binding](), { host: 'evil.example' }));
    expect(outcome(answer)).toBe('refused MISDIRECTED');
    expect(answer.headers.connection).toBe('close');
  });

  it.each(bindings)('%s: a post from another origin → 403', async (binding) => {
    const answer = await ask(node, withHeaders(anyRequest[binding](), { Origin: 'http://evil.example' }));
    expect(outcome(answer)).toBe('refused FORBIDDEN');
  });

  it.each(bindings)('%s: a declared body over the limit → 413', async (binding) => {
    const big = { ...anyRequest[binding](), body: ' '.repeat(MAX_BODY + 1) };
    expect(outcome(await ask(node, big))).toBe('refused TOO_LARGE');
  });

  it.each(bindings)('%s: a chunked body over the limit → 413, the rest read and dropped after it', async (binding) => {
    const request = anyRequest[binding]();
    const chunked = { ...request, body: undefined, chunks: Array.from({ length: 8 }, () => ' '.repeat(1024)) };
    const answer = await ask(node, chunked);
    expect(outcome(answer)).toBe('refused TOO_LARGE');
  });

  it.each(bindings)('%s: a body that is not JSON → malformed', async (binding) => {
    expect(outcome(await ask(node, { ...anyRequest[binding](), body: '{"oops' }))).toBe('error MALFORMED');
  });

  it.each(bindings)('%s: a text/plain body → CONTENT_TYPE_NOT_SUPPORTED', async (binding) => {
    const plain = withHeaders(anyRequest[binding](), { 'Content-Type': 'text/plain' });
    expect(outcome(await ask(node, plain))).toBe('error CONTENT_TYPE_NOT_SUPPORTED');
  });
});

/** What a gRPC answer means, in the words of {@link outcome}. */
function grpcOutcome(answer: GrpcAnswer): string {
  if (answer.error) {
    const [blob] = answer.error.metadata?.get(GRPC_STATUS_DETAILS_BIN) ?? [];
    const info = blob
      ? decodeStatus(blob as Buffer).details.find((d) => d.typeUrl.endsWith('google.rpc.ErrorInfo'))
      : undefined;
    const reason = info && decodeErrorInfo(info.value).reason;
    const refusal = GRPC_REFUSALS[answer.error.code];
    if (!reason && refusal) return `refused ${refusal}`;
    return `error ${reason === 'INVALID_PARAMS' ? 'MALFORMED' : (reason ?? answer.error.code)}`;
  }
  const [first, ...rest] = answer.messages as Array<Record<string, any>>;
  if (answer.streamed) {
    const last = (rest.at(-1) ?? first) as Record<string, any>;
    const state = last.payload?.value?.status?.state;
    return `stream ${first.payload?.$case === 'task' ? 'task' : 'event'} … ${stateOf(taskStateName(state))}`;
  }
  const task = first.payload?.$case === 'task' ? first.payload.value : first.status ? first : undefined;
  if (task) return `task ${stateOf(taskStateName(task.status.state))}`;
  if (Array.isArray(first.tasks)) return 'list';
  if (Array.isArray(first.configs)) return `push configs ${first.configs.map((c: { id: string }) => c.id).join(',')}`;
  if (first.url) return `push config ${first.id}`;
  return JSON.stringify(first).slice(0, 80);
}

/** gRPC codes the inbound chain refuses with, in the words of the HTTP refusals. */
const GRPC_REFUSALS: Record<number, string> = {
  [grpc.status.UNAUTHENTICATED]: 'UNAUTHENTICATED',
  [grpc.status.PERMISSION_DENIED]: 'MISDIRECTED',
  [grpc.status.RESOURCE_EXHAUSTED]: 'TOO_LARGE',
};

/** The name of a task state the SDK's codecs give as a number. */
const taskStateName = (state: number) =>
  [
    'UNSPECIFIED',
    'SUBMITTED',
    'WORKING',
    'COMPLETED',
    'FAILED',
    'CANCELED',
    'INPUT_REQUIRED',
    'REJECTED',
    'AUTH_REQUIRED',
  ][state];

/** The JSON-RPC case as a gRPC call: its method, its params read as the method's request message. */
function overGrpc(spelled: Spelled): { method: string; params: Record<string, unknown> } {
  const { method, params } = JSON.parse(spelled.body as string) as { method: string; params: Record<string, unknown> };
  return { method, params };
}

describe('every A2A method gives the same outcome over gRPC', () => {
  const rows = cases.filter((c) => c.on.jsonrpc).map((c) => ({ ...c, spell: c.on.jsonrpc! }));
  it.each(rows)('$method, $what, on grpc: $expected', async ({ spell, expected }) => {
    const { method, params } = overGrpc(spell(known));
    expect(grpcOutcome(await grpcCall(node.grpcAddress!, method, params))).toBe(expected);
  });

  it('GetExtendedAgentCard with credentials configured: the extended card', async () => {
    const answer = await grpcCall(
      guarded.grpcAddress!,
      'GetExtendedAgentCard',
      {},
      {
        authorization: 'Bearer parity-token-0123456789',
      },
    );
    expect((answer.messages[0] as { name: string }).name).toBe('lango-orchestrator');
  });

  it('no credential → UNAUTHENTICATED, as 401 on the HTTP bindings', async () => {
    expect(grpcOutcome(await grpcCall(guarded.grpcAddress!, 'GetTask', { id: 'x' }))).toBe('refused UNAUTHENTICATED');
    const admitted = await grpcCall(
      guarded.grpcAddress!,
      'GetTask',
      { id: 'x' },
      {
        authorization: 'Bearer parity-token-0123456789',
      },
    );
    expect(grpcOutcome(admitted)).toBe('error TASK_NOT_FOUND');
  });

  it('an authority that is not this node → refused, as 421 on the HTTP bindings', async () => {
    const answer = await grpcCall(node.grpcAddress!, 'GetTask', { id: 'x' }, {}, { authority: 'evil.example' });
    expect(grpcOutcome(answer)).toBe('refused MISDIRECTED');
  });

  it('a message over the limit → refused, as 413 on the HTTP bindings', async () => {
    const big = messageV1({ parts: [{ text: 'x'.repeat(MAX_BODY + 1) }] });
    expect(grpcOutcome(await grpcCall(node.grpcAddress!, 'SendMessage', big))).toBe('refused TOO_LARGE');
  });
});
