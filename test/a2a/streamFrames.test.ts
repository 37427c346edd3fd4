import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Role, StreamResponse, TaskState, type AgentCard, type Message } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { AgentEvent, type A2ARequestHandler } from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { LiveTasks } from '../../src/a2a/tasks/liveTasks';
import { newTask, textPart } from '../../src/a2a/tasks/messages';
import type { TaskRows } from '../../src/store/taskRows';
import { bindingsFor } from '../support/inboundListener';
import { waitFor } from '../support/waitFor';

/** POSTs `body` and resolves with the raw answer. */
function post(url: string, body: string): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
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
    req.end(body);
  });
}

async function listen(listener: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A turn's events with what JSON escapes differently: quotes, a line separator, non-BMP text, nested metadata. */
const SCRIPTED = [
  { task: { id: 't-1', contextId: 'c-1', status: { state: 'TASK_STATE_SUBMITTED' }, history: [] } },
  {
    statusUpdate: {
      taskId: 't-1',
      contextId: 'c-1',
      status: {
        state: 'TASK_STATE_WORKING',
        message: { messageId: 'p-1', role: 'ROLE_AGENT', parts: [{ text: 'grüße "quoted"\n\u2028 🌍' }] },
      },
      metadata: { k: [1, null, 'v'] },
    },
  },
  {
    artifactUpdate: {
      taskId: 't-1',
      contextId: 'c-1',
      artifact: { artifactId: 'a-1', name: 'answer', parts: [{ text: 'echo: slow' }] },
      append: false,
      lastChunk: true,
    },
  },
  { statusUpdate: { taskId: 't-1', contextId: 'c-1', status: { state: 'TASK_STATE_COMPLETED' } } },
].map((json) => StreamResponse.fromJSON(json));

/** A request handler streaming {@link SCRIPTED}, whose SubscribeToTask fails before any event. */
function scriptedHandler(): A2ARequestHandler {
  const card = {
    capabilities: { streaming: true },
    supportedInterfaces: [{ url: 'http://127.0.0.1/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  } as unknown as AgentCard;
  return {
    getAgentCard: async () => card,
    async *sendMessageStream() {
      for (const event of SCRIPTED) yield event;
    },
    // eslint-disable-next-line require-yield
    async *resubscribe(params: { id: string }) {
      throw new TaskNotFoundError(`Task not found: ${params.id}`);
    },
  } as unknown as A2ARequestHandler;
}

describe('SendStreamingMessage frames written by the JSON-RPC binding', () => {
  const handler = scriptedHandler();
  let ours: { server: http.Server; url: string };
  let sdk: { server: http.Server; url: string };
  beforeAll(async () => {
    ours = await listen(bindingsFor(handler));
    sdk = await listen(
      express().use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication })),
    );
  });
  afterAll(async () => {
    for (const { server } of [ours, sdk]) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("are byte for byte the SDK express handler's frames for the same events", async () => {
    const request = JSON.stringify({
      jsonrpc: '2.0',
      id: 'req-"7"',
      method: 'SendStreamingMessage',
      params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
    });
    const direct = await post(ours.url, request);
    const expected = await post(sdk.url, request);
    expect(direct.status).toBe(200);
    expect(direct.type).toBe('text/event-stream');
    expect(expected.type).toBe('text/event-stream');
    const frames = direct.text.split('\n\n').filter(Boolean);
    expect(frames).toHaveLength(SCRIPTED.length);
    expect(frames.every((f) => f.startsWith('data: {"jsonrpc":"2.0","id":"req-\\"7\\"","result":{'))).toBe(true);
    expect(direct.text).toBe(expected.text);
  });

  it('answers a refusal before any event as the SDK does: JSON, not a stream', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'SubscribeToTask', params: { id: 'no-such-task' } });
    const direct = await post(ours.url, body);
    const expected = await post(sdk.url, body);
    expect(direct.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(direct.text)).toEqual(JSON.parse(expected.text));
    expect(JSON.parse(direct.text).error.code).toBe(-32001);
    // An id that is not an integer is refused as JSON-RPC names it (the SDK's transport says -32602), the stream unopened.
    const fractional = JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'SubscribeToTask', params: { id: 'x' } });
    const refused = JSON.parse((await post(ours.url, fractional)).text);
    expect(refused).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: id must be a string, an integer or null' },
    });
    expect(JSON.parse((await post(sdk.url, fractional)).text).error.code).toBe(-32602);
  });
});

/**
 * The binding over a real HTTP server, with a request handler whose stream is a generator the test
 * watches: how far the binding has read it, and whether it was ended.
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
    server = http.createServer(bindingsFor(handler));
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
    await waitFor(() => read > 0, 20_000, 'the first event');
    // Had the binding read on regardless, it had the chance: a whole request has been served by this process
    // (server and reader share its event loop) since. The socket's buffers take a few megabytes.
    await (await fetch(`${url}.well-known/agent-card.json`)).text();
    expect(read).toBeLessThan(150);
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
    // The binding writes the SSE headers with the first event: the response comes once it is folded.
    const opening = open();
    await waitFor(() => live.listeners?.length === 1, 20_000, 'the stream to listen');
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
    await waitFor(() => live.listeners?.length === 0, 20_000, 'the subscription to end after the caller left');
    expect(liveTasks.size).toBe(1); // the task itself runs on
  });
});
