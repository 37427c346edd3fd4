/**
 * Generators of bad requests for the fuzz suite. Every generator returns a
 * request that must be refused: a broken envelope, a wrong type, an unknown
 * method, a task that does not exist, a body over the size limit… Nothing
 * here can produce a valid `SendMessage`, so every answer must be an error.
 */

/** One generated HTTP request. */
export interface FuzzRequest {
  kind: string;
  target: 'jsonrpc' | 'rest';
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

type Rand = () => number;

const JSON_HEADERS = { 'content-type': 'application/json' };
const V1 = { 'content-type': 'application/json', 'a2a-version': '1.0' };

const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)];
const int = (rand: Rand, max: number) => Math.floor(rand() * max);

function randomBytes(rand: Rand, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = int(rand, 256);
  return out;
}

function randomString(rand: Rand, length: number): string {
  const alphabet = 'abcXYZ019 _-/:.%$#@!?\\"\'{}[]<>\u00e9\u4e2d\ud83d\ude00\u0000\u202e';
  let s = '';
  for (let i = 0; i < length; i++) s += alphabet[int(rand, alphabet.length)];
  return s;
}

/** Drops lone UTF-16 surrogates, which encodeURIComponent refuses. */
function pathSafe(text: string): string {
  return text.replace(/[\ud800-\udfff]/g, 'x');
}

/** A JSON value of any type except a plain object. */
function nonObject(rand: Rand): unknown {
  return pick(rand, [0, -1, 3.5, 1e308, '', 'x', randomString(rand, 8), true, false, null, [], [1, 'a'], [{}]]);
}

/** Any JSON value that is not a string (for fields that must be strings). */
function nonString(rand: Rand): unknown {
  return pick(rand, [0, 42, -7.25, true, false, null, [], ['a'], {}, { a: 1 }]);
}

function nested(depth: number, asArray: boolean): string {
  return asArray ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

function rpcBody(method: unknown, params: unknown, id: unknown = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

function v1Message(rand: Rand, overrides: Record<string, unknown>): Record<string, unknown> {
  return { messageId: `fuzz-${int(rand, 1e9)}`, role: 'ROLE_USER', parts: [{ text: 'hi' }], ...overrides };
}

/** Bad parts for v1.0 (`{text|data|url|raw}` exactly one) and v0.3 (`kind`). */
function badV1Part(rand: Rand): unknown {
  return pick(rand, [
    {},
    { bogus: 1 },
    { metadata: { a: 1 } },
    { text: nonString(rand) },
    { kind: 'text', text: 5 },
    { url: 42 },
    { raw: 12345 },
    nonObject(rand),
  ]);
}

function badV03Part(rand: Rand): unknown {
  return pick(rand, [
    { kind: 'bogus' },
    { kind: randomString(rand, 6) },
    { kind: 'text' },
    { kind: 'text', text: nonString(rand) },
    { kind: 'file', file: pick(rand, ['nope', 5, null]) },
    { kind: 'data', data: pick(rand, ['not an object', 5, [1]]) },
    { text: 'no kind' },
    nonObject(rand),
  ]);
}

/** JSON-RPC generators, `POST /`. */
const jsonRpcGenerators: Array<(rand: Rand) => Omit<FuzzRequest, 'target' | 'method' | 'path'>> = [
  (rand) => ({ kind: 'random bytes', headers: JSON_HEADERS, body: randomBytes(rand, 1 + int(rand, 2000)) }),
  (rand) => ({
    kind: 'truncated json',
    headers: JSON_HEADERS,
    body: rpcBody('GetTask', { id: 'x' }).slice(0, 1 + int(rand, 40)),
  }),
  (rand) => ({ kind: 'non-object body', headers: JSON_HEADERS, body: JSON.stringify(nonObject(rand)) }),
  (rand) => ({
    kind: 'wrong envelope types',
    headers: JSON_HEADERS,
    body: JSON.stringify(
      pick(rand, [
        { jsonrpc: nonString(rand), id: 1, method: 'GetTask', params: { id: 'x' } },
        { jsonrpc: '1.0', id: 1, method: 'GetTask', params: { id: 'x' } },
        { jsonrpc: '2.0', id: 1, method: nonString(rand), params: {} },
        { jsonrpc: '2.0', id: 1, method: '', params: {} },
        { jsonrpc: '2.0', id: 1, method: 'GetTask', params: pick(rand, [5, 'str', true, [1]]) },
        { jsonrpc: '2.0', id: 1 },
      ]),
    ),
  }),
  (rand) => ({
    kind: 'invalid id',
    headers: JSON_HEADERS,
    body: rpcBody('GetTask', { id: 'x' }, pick(rand, [{}, { a: 1 }, [], [1], true, false])),
  }),
  (rand) => ({
    kind: 'unknown method',
    headers: pick(rand, [JSON_HEADERS, V1]),
    body: rpcBody(
      pick(rand, [
        'Nope',
        'tasks/explode',
        'sendmessage',
        'SendMessage ',
        '__proto__',
        'constructor',
        'toString',
        randomString(rand, 12),
      ]),
      {},
    ),
  }),
  (rand) => ({
    kind: 'wrong param types',
    headers: V1,
    body: rpcBody(
      pick(rand, ['SendMessage', 'SendStreamingMessage', 'GetTask', 'CancelTask', 'SubscribeToTask']),
      pick(rand, [
        { message: nonObject(rand) },
        { id: nonString(rand) },
        { message: v1Message(rand, { parts: nonObject(rand) }) },
        { message: v1Message(rand, { role: pick(rand, ['ROLE_NOPE', 7, null]) }) },
        { message: v1Message(rand, { messageId: nonString(rand) }) },
      ]),
    ),
  }),
  (rand) => ({
    kind: 'bad v1.0 part',
    headers: V1,
    body: rpcBody(pick(rand, ['SendMessage', 'SendStreamingMessage']), {
      message: v1Message(rand, { parts: [badV1Part(rand)] }),
    }),
  }),
  (rand) => ({
    kind: 'bad v0.3 part',
    headers: JSON_HEADERS,
    body: rpcBody(pick(rand, ['message/send', 'message/stream']), {
      message: { kind: 'message', messageId: `fuzz-${int(rand, 1e9)}`, role: 'user', parts: [badV03Part(rand)] },
    }),
  }),
  (rand) => ({
    kind: 'unknown task',
    headers: V1,
    body: rpcBody(pick(rand, ['GetTask', 'CancelTask', 'SubscribeToTask']), {
      id: pick(rand, ['does-not-exist', randomString(rand, 30), '../../etc/passwd', '%00']),
    }),
  }),
  (rand) => ({
    kind: 'follow-up to unknown task',
    headers: V1,
    body: rpcBody('SendMessage', { message: v1Message(rand, { taskId: `missing-${int(rand, 1e9)}` }) }),
  }),
  (rand) => ({
    kind: 'deep nesting',
    headers: JSON_HEADERS,
    body: pick(rand, [
      nested(10 + int(rand, 30_000), rand() < 0.5),
      `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":${nested(10 + int(rand, 20_000), rand() < 0.5)}}`,
      rpcBody(
        'SendMessage',
        { message: v1Message(rand, { metadata: JSON.parse(nested(200 + int(rand, 800), false)) }), bad: true },
        1,
      ).replace('"messageId"', '"messageId":5,"x"'),
    ]),
  }),
  (rand) => ({
    kind: 'huge string',
    headers: V1,
    body: rpcBody('SendMessage', {
      message: v1Message(rand, { parts: [{ text: 'a'.repeat(110_000 + int(rand, 200_000)) }] }),
    }),
  }),
  (rand) => ({
    kind: 'bad headers',
    headers: pick(rand, [
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'multipart/form-data; boundary=x' },
      {
        'content-type': 'application/json',
        'a2a-version': pick(rand, [
          '9.9',
          'abc',
          '',
          '1.0.0.0',
          '0.1',
          randomString(rand, 10).replace(/[^\x20-\x7e]/g, ''),
        ]),
      },
      { 'content-type': 'application/json; charset=utf-16', 'a2a-version': '1.0' },
    ]),
    body: rpcBody('GetTask', { id: 'missing' }),
  }),
  (rand) => ({
    kind: 'bad push config',
    headers: V1,
    body: rpcBody(
      pick(rand, [
        'CreateTaskPushNotificationConfig',
        'GetTaskPushNotificationConfig',
        'DeleteTaskPushNotificationConfig',
        'ListTaskPushNotificationConfigs',
      ]),
      pick(rand, [
        { taskId: 'nope', config: { url: 'not a url' } },
        { taskId: nonString(rand) },
        { taskId: 'nope', id: 'x' },
        {},
      ]),
    ),
  }),
];

const REST_PATHS = [
  '/v1/message:send',
  '/v1/message:stream',
  '/v1/tasks/missing',
  '/v1/tasks/missing:cancel',
  '/v1/tasks/missing:subscribe',
  '/v1/tasks/missing/pushNotificationConfigs',
  '/v1/tasks',
];

/** REST (HTTP+JSON) generators. */
const restGenerators: Array<(rand: Rand) => Omit<FuzzRequest, 'target'>> = [
  (rand) => ({
    kind: 'rest random bytes',
    method: 'POST',
    path: pick(rand, REST_PATHS.slice(0, 2)),
    headers: pick(rand, [JSON_HEADERS, V1]),
    body: randomBytes(rand, 1 + int(rand, 2000)),
  }),
  (rand) => ({
    kind: 'rest non-object',
    method: 'POST',
    path: pick(rand, REST_PATHS.slice(0, 2)),
    headers: pick(rand, [JSON_HEADERS, V1]),
    body: JSON.stringify(nonObject(rand)),
  }),
  (rand) => ({
    kind: 'rest wrong message',
    method: 'POST',
    path: pick(rand, REST_PATHS.slice(0, 2)),
    headers: V1,
    body: JSON.stringify(
      pick(rand, [
        { message: nonObject(rand) },
        { message: v1Message(rand, { parts: [badV1Part(rand)] }) },
        { message: v1Message(rand, { role: 'ROLE_NOPE' }) },
        { message: v1Message(rand, { messageId: nonString(rand) }) },
        {},
        { msg: {} },
      ]),
    ),
  }),
  (rand) => ({
    kind: 'rest v0.3 bad part',
    method: 'POST',
    path: '/v1/message:send',
    headers: JSON_HEADERS,
    body: JSON.stringify({ message: { kind: 'message', messageId: 'x', role: 'user', parts: [badV03Part(rand)] } }),
  }),
  (rand) => ({
    kind: 'rest unknown task',
    method: pick(rand, ['GET', 'POST']),
    path:
      pick(rand, ['/v1/tasks/', '/v1/tasks/missing-', '/v1/tasks/%ff%fe', '/v1/tasks/..%2f..%2f']) +
      encodeURIComponent(pathSafe(randomString(rand, 6))) +
      pick(rand, ['', ':cancel', ':subscribe', '/pushNotificationConfigs', '/pushNotificationConfigs/x']),
    headers: pick(rand, [JSON_HEADERS, V1]),
  }),
  (rand) => ({
    kind: 'rest bad query',
    method: 'GET',
    path: `/v1/tasks?${pick(rand, ['pageSize=abc', 'pageSize=-5', 'pageSize=1e999', 'status=NOPE', 'historyLength=x', 'pageToken=%zz'])}`,
    headers: V1,
  }),
  (rand) => ({
    kind: 'rest wrong verb',
    method: pick(rand, ['PUT', 'PATCH', 'DELETE']),
    path: pick(rand, REST_PATHS),
    headers: V1,
    body: '{}',
  }),
  (rand) => ({
    kind: 'rest unknown path',
    method: pick(rand, ['GET', 'POST']),
    path: `/${pick(rand, ['v2', 'v1', 'admin', '.env', 'v1/message:explode'])}/${encodeURIComponent(pathSafe(randomString(rand, 8)))}`,
    headers: JSON_HEADERS,
    body: undefined,
  }),
  (rand) => ({
    kind: 'rest deep nesting',
    method: 'POST',
    path: '/v1/message:send',
    headers: V1,
    body: nested(10 + int(rand, 30_000), rand() < 0.5),
  }),
  (rand) => ({
    kind: 'rest huge body',
    method: 'POST',
    path: '/v1/message:send',
    headers: V1,
    body: JSON.stringify({ message: v1Message(rand, { parts: [{ text: 'b'.repeat(110_000 + int(rand, 150_000)) }] }) }),
  }),
  (rand) => ({
    kind: 'rest bad headers',
    method: 'POST',
    path: '/v1/message:send',
    headers: pick(rand, [
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/json', 'a2a-version': '7.7' },
      { 'content-type': 'application/xml' },
    ]),
    body: '<message/>',
  }),
];

/** `count` bad requests from `rand`: about two thirds JSON-RPC, one third REST; huge bodies kept rare. */
export function generateBadRequests(rand: Rand, count: number): FuzzRequest[] {
  const out: FuzzRequest[] = [];
  while (out.length < count) {
    if (rand() < 0.65) {
      const gen = jsonRpcGenerators[int(rand, jsonRpcGenerators.length)];
      const r = gen(rand);
      if (r.kind === 'huge string' && rand() < 0.8) continue;
      out.push({ ...r, target: 'jsonrpc', method: 'POST', path: '/' });
    } else {
      const r = restGenerators[int(rand, restGenerators.length)](rand);
      if (r.kind === 'rest huge body' && rand() < 0.8) continue;
      out.push({ ...r, target: 'rest', body: r.method === 'GET' ? undefined : r.body });
    }
  }
  return out;
}

/** Raw HTTP/1.1 byte sequences the HTTP parser must refuse. */
export function malformedHttp(rand: Rand, count: number): Buffer[] {
  const out: Buffer[] = [];
  const templates = [
    () => Buffer.from('GARBAGE / HTTP/1.1\r\nHost: x\r\n\r\n'),
    () => Buffer.from('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}'),
    () => Buffer.from('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'),
    () => Buffer.from('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nhello\r\n0\r\n\r\n'),
    () => Buffer.from(`GET /${'a'.repeat(100)} HTTP/9.9\r\n\r\n`),
    () => Buffer.concat([Buffer.from('GET / HTTP/1.1\r\n'), randomBytes(rand, 200), Buffer.from('\r\n\r\n')]),
    () => Buffer.from(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`),
  ];
  for (let i = 0; i < count; i++) out.push(templates[i % templates.length]());
  return out;
}
