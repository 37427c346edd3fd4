import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { Role, TaskState, type AgentCard, type Message, type StreamResponse } from '@a2a-js/sdk';
import { AgentEvent, type A2ARequestHandler } from '@a2a-js/sdk/server';
import { jsonRpcRoute } from '../../src/a2a/jsonRpcRoute';
import { LiveTasks } from '../../src/a2a/liveTasks';
import { newTask, textPart } from '../../src/a2a/messages';
import type { TaskRows } from '../../src/store/taskRows';
import { createMemoryLogger } from '../../src/log/logger';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { holdsFor, waitFor } from '../support/waitFor';

/** POSTs `body` (gzipped: express and the SDK's own handler answer it) and resolves with the raw answer. */
function post(url: string, body: string, gzip: boolean): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = gzip ? zlib.gzipSync(body) : Buffer.from(body);
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
    if (gzip) headers['Content-Encoding'] = 'gzip';
    const req = http.request(`${url}/`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type']),
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The frames with each run's own ids (UUIDs, in order of first appearance) and times replaced by placeholders. */
function normalized(text: string): string {
  const ids = new Map<string, string>();
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
      if (!ids.has(id)) ids.set(id, `<id${ids.size + 1}>`);
      return ids.get(id)!;
    })
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>');
}

describe('SendStreamingMessage frames written by the JSON-RPC route', () => {
  let node: A2ATestNode;
  beforeAll(async () => {
    node = await startA2ANode();
  });
  afterAll(() => node.close());

  it("are byte for byte the SDK handler's frames for the same task", async () => {
    const request = (messageId: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'req-"7"',
        method: 'SendStreamingMessage',
        params: {
          message: {
            messageId,
            role: 'ROLE_USER',
            parts: [{ text: 'grüße "quoted"\n\u2028 🌍 slow', metadata: { k: [1, null, 'v'] } }],
            metadata: { origin: 'test' },
          },
        },
      });
    const direct = await post(node.url, request('0a0a0a0a-0000-4000-8000-000000000001'), false);
    const sdk = await post(node.url, request('0a0a0a0a-0000-4000-8000-000000000002'), true);
    expect(direct.status).toBe(200);
    expect(direct.type).toBe('text/event-stream');
    expect(sdk.type).toBe('text/event-stream');
    const frames = direct.text.split('\n\n').filter(Boolean);
    // The scripted turn: the task, working, its progress, the answer, completed.
    expect(frames.length).toBeGreaterThan(4);
    expect(frames.every((f) => f.startsWith('data: {"jsonrpc":"2.0","id":"req-\\"7\\"","result":{'))).toBe(true);
    expect(normalized(direct.text)).toBe(normalized(sdk.text));
  });

  it('answers a refusal before any event as the SDK does: JSON, not a stream', async () => {
    const body = (extra: object) =>
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'SubscribeToTask', params: { id: 'no-such-task', ...extra } });
    const direct = await post(node.url, body({}), false);
    const sdk = await post(node.url, body({}), true);
    expect(direct.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(direct.text)).toEqual(JSON.parse(sdk.text));
    expect(JSON.parse(direct.text).error.code).toBe(-32001);
    // An id the SDK's transport refuses (not an integer) is left to it, and refused as before.
    const fractional = await post(
      node.url,
      JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'SubscribeToTask', params: { id: 'x' } }),
      false,
    );
    const fractionalSdk = await post(
      node.url,
      JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'SubscribeToTask', params: { id: 'x' } }),
      true,
    );
    expect(fractional.text).toBe(fractionalSdk.text);
    expect(JSON.parse(fractional.text).error).toBeDefined();
  });
});

/**
 * The route alone over a real HTTP server, with a request handler whose stream is a generator the test
 * watches: how far the route has read it, and whether it was ended.
 */
describe('a JSON-RPC stream and its reader', () => {
  const card = {
    supportedInterfaces: [{ url: 'http://127.0.0.1/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  } as unknown as AgentCard;
  let read = 0;
  let ended = false;
  let events: () => AsyncGenerator<StreamResponse>;
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    const handler = {
      getAgentCard: async () => card,
      sendMessageStream: () => events(),
    } as unknown as A2ARequestHandler;
    const front = jsonRpcRoute({
      requestHandler: handler,
      authenticate: () => ({ isAuthenticated: false, userName: '' }),
      intercepts: [],
      maxBodyBytes: 1 << 20,
      legacyCompat: false,
      logger: createMemoryLogger(),
    });
    server = http.createServer((req, res) => {
      if (!front(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    read = 0;
    ended = false;
  });

  const streamRequest = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendStreamingMessage',
    params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
  });
  const open = (): Promise<http.IncomingMessage> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        url,
        { method: 'POST', headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' } },
        resolve,
      );
      req.on('error', reject);
      req.end(streamRequest);
    });

  /** `count` artifact chunks of `size` characters each, as fast as they are read. */
  const chunks = (count: number, size: number) =>
    async function* (): AsyncGenerator<StreamResponse> {
      try {
        for (; read < count;) {
          read += 1;
          yield {
            payload: {
              $case: 'artifactUpdate',
              value: {
                taskId: 't',
                contextId: 'c',
                artifact: {
                  artifactId: 'a',
                  name: '',
                  description: '',
                  parts: [{ content: { $case: 'text', value: 'x'.repeat(size) }, filename: '', mediaType: '' }],
                  extensions: [],
                },
                append: true,
                lastChunk: false,
              },
            },
          } as unknown as StreamResponse;
        }
      } finally {
        ended = true;
      }
    };

  it('reads the next event only once the socket took the last: a paused reader stops the reading', async () => {
    const count = 400;
    const size = 64 * 1024;
    events = chunks(count, size);
    const res = await open();
    res.pause();
    // Without backpressure all 400 events (25 MiB) would be read and buffered at once.
    await waitFor(() => read > 0, 5_000, 'the first event');
    await holdsFor(() => read < 150, 500, 'the route stopping at the paused reader');
    let bytes = 0;
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    res.resume();
    await new Promise<void>((resolve) => res.on('end', resolve));
    expect(read).toBe(count);
    expect(Math.round(bytes / (size + 150))).toBe(count);
    expect(ended).toBe(true);
  });

  it("ends the live task's subscription as soon as the caller leaves mid-stream", async () => {
    const liveTasks = new LiveTasks({ rows: {} as TaskRows });
    const live = liveTasks.begin(
      { tenant: '', owner: 'anyone' },
      { taskId: 'task-1', contextId: 'ctx-1' },
      'on-settle',
    );
    const ids = { taskId: 'task-1', contextId: 'ctx-1' };
    const userMessage = { messageId: 'm', role: Role.ROLE_USER, parts: [textPart('hi')] } as unknown as Message;
    events = () =>
      liveTasks.subscribe(live, (heard) =>
        heard.event.kind === 'task'
          ? ({ payload: { $case: 'task', value: heard.task } } as StreamResponse)
          : ({ payload: { $case: 'statusUpdate', value: heard.event.data } } as StreamResponse),
      );
    // The route writes the SSE headers with the first event: the response comes once it is folded.
    const opening = open();
    await waitFor(() => live.listeners?.length === 1, 2_000, 'the stream to listen');
    liveTasks.fold(
      live,
      AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_WORKING, new Date(0))),
      userMessage,
    );
    const res = await opening;
    const first = await new Promise<string>((resolve) => res.once('data', (c: Buffer) => resolve(c.toString())));
    expect(first).toMatch(/^data: \{"jsonrpc":"2\.0","id":1,"result":\{"task":\{"id":"task-1"/);
    res.destroy();
    // No further event is folded: only the caller leaving can end the subscription.
    await waitFor(() => live.listeners?.length === 0, 2_000, 'the subscription to end after the caller left');
    expect(liveTasks.size).toBe(1); // the task itself runs on
  });
});
