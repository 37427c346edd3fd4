import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Model, ModelEvent, ModelRequest } from '../../src/llm/model';
import { createOpenAIModel } from '../../src/llm/openai';
import { createMemoryLogger } from '../../src/log/logger';
import { createEndpointFetch } from '../../src/net/endpoint';
import { startOpenAIServer } from '../support/openaiServer';

const request = (signal = new AbortController().signal): ModelRequest => ({
  agentName: 'lango-agent',
  instruction: 'You are terse.',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: {} } }],
  signal,
});

async function events(model: Model): Promise<ModelEvent[] | { error: string }> {
  const seen: ModelEvent[] = [];
  try {
    for await (const event of model.stream(request())) seen.push(event);
    return seen;
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: null }],
    ...extra,
  });

/**
 * The Chat Completions model (the `openai` package's client over the address
 * policy's fetch) on the wire shapes an OpenAI-compatible server may write:
 * events split across writes, a character split across two, CRLF lines,
 * comments and other fields, `data` over several lines, tool calls in
 * fragments and out of order, an answer without `[DONE]`, an error mid-answer.
 */
describe('the Chat Completions model reads every shape of stream', () => {
  let server: http.Server;
  let baseURL: string;
  let writes: string[] | Buffer[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', async () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of writes) {
          res.write(piece);
          // Apart in time, so each write reaches the client as its own read.
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const model = () =>
    createOpenAIModel({
      apiKey: 'k',
      baseURL,
      model: 'm',
      logger: createMemoryLogger(),
      timeoutMs: 20_000,
      maxRetries: 0,
      fetch: createEndpointFetch({ baseUrl: baseURL, setting: 'agent.baseUrl' }),
    });
  const text = (delta: string): ModelEvent => ({ type: 'text_delta', delta });
  const wires: Array<[string, Array<string | Buffer>, ModelEvent[]]> = [
    [
      'one event per write',
      [`data: ${chunk({ content: 'Hel' })}\n\n`, `data: ${chunk({ content: 'lo' })}\n\n`, 'data: [DONE]\n\n'],
      [text('Hel'), text('lo')],
    ],
    [
      'events split anywhere, two in one write',
      [
        `data: ${chunk({ content: 'a' })}\n`,
        `\ndata: ${chunk({ content: 'b' })}\n\ndata: ${chunk({ content: 'c' }).slice(0, 20)}`,
        `${chunk({ content: 'c' }).slice(20)}\n\n`,
        'data: [DONE]\n\n',
      ],
      [text('a'), text('b'), text('c')],
    ],
    (() => {
      const bytes = Buffer.from(`data: ${chunk({ content: 'grüße 👋' })}\n\n`);
      const cut = bytes.indexOf(Buffer.from('👋')) + 2;
      return [
        'a character split across two writes',
        [bytes.subarray(0, cut), bytes.subarray(cut), Buffer.from('data: [DONE]\n\n')],
        [text('grüße 👋')],
      ] as [string, Buffer[], ModelEvent[]];
    })(),
    [
      'CRLF lines, comments, ids, retry and event names',
      [
        `: keep-alive\r\nid: 1\r\nretry: 100\r\nevent: message\r\ndata: ${chunk({ content: 'x' })}\r\n\r\n`,
        'data: [DONE]\r\n\r\n',
      ],
      [text('x')],
    ],
    [
      'data over two lines',
      [
        `data: {"id":"c1","object":"chat.completion.chunk",\ndata: "created":1,"model":"m","choices":[{"index":0,"delta":{"content":"y"},"finish_reason":null}]}\n\n`,
        'data: [DONE]\n\n',
      ],
      [text('y')],
    ],
    [
      'tool calls in fragments, out of order, with usage last',
      [
        `data: ${chunk({ tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'second', arguments: '' } }] })}\n\n`,
        `data: ${chunk({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'first', arguments: '{"q"' } }] })}\n\n`,
        `data: ${chunk({
          tool_calls: [
            { index: 0, function: { arguments: ':1}' } },
            { index: 1, function: { arguments: '{}' } },
          ],
        })}\n\n`,
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } })}\n\n`,
        'data: [DONE]\n\n',
      ],
      [
        { type: 'usage', inputTokens: 7, outputTokens: 3 },
        { type: 'tool_call', call: { id: 'a', name: 'first', arguments: '{"q":1}' } },
        { type: 'tool_call', call: { id: 'b', name: 'second', arguments: '{}' } },
      ],
    ],
    ['an answer that ends without [DONE]', [`data: ${chunk({ content: 'end' })}\n\n`], [text('end')]],
  ];

  it.each(wires)('%s', async (_name, wire, expected) => {
    writes = wire as string[];
    expect(await events(model())).toEqual(expected);
  });

  it.each([
    ['an error chunk', `data: {"error":{"message":"overloaded","type":"server_error"}}\n\n`],
    ['an error event', `event: error\ndata: {"error":{"message":"overloaded"}}\n\n`],
  ])('fails on %s mid-answer, naming the error', async (_name, failure) => {
    writes = [`data: ${chunk({ content: 'par' })}\n\n`, failure];
    expect(await events(model())).toEqual({ error: 'the model endpoint reported an error mid-answer: overloaded' });
  });
});

describe('the Chat Completions model against the scripted server', () => {
  it('sends the system prompt, the conversation and the tools as functions, with the key and no environment', async () => {
    const server = await startOpenAIServer();
    try {
      const model = createOpenAIModel({
        apiKey: 'sk-test',
        baseURL: server.baseURL,
        model: 'gpt-test',
        logger: createMemoryLogger(),
        timeoutMs: 20_000,
        fetch: createEndpointFetch({ baseUrl: server.baseURL, setting: 'agent.baseUrl' }),
      });
      server.push({ toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { q: 'x' } }], text: 'one moment' });
      expect(await events(model)).toEqual([
        { type: 'text_delta', delta: 'one moment' },
        expect.objectContaining({ type: 'usage' }),
        { type: 'tool_call', call: { id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' } },
      ]);
      const [sent] = server.requests;
      expect(sent!.path).toBe('/v1/chat/completions');
      expect(sent!.headers.authorization).toBe('Bearer sk-test');
      expect(sent!.body).toMatchObject({
        model: 'gpt-test',
        stream: true,
        stream_options: { include_usage: true },
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'hi' },
        ],
        tools: [
          {
            type: 'function',
            function: { name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: {} } },
          },
        ],
      });
    } finally {
      await server.close();
    }
  });
});
