import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Model, ModelEvent, ModelRequest } from '../../src/llm/model';
import { createOpenAIModel } from '../../src/llm/openai';
import { createMemoryLogger } from '../../src/log/logger';
import { createEndpointFetch } from '../../src/net/endpoint';
import { createOpenAIPackageModel } from '../support/openaiReference';
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
 * The node's own Chat Completions client against the `openai` package's, on
 * the same bytes: whatever the package reads from a stream, ours reads the
 * same events from — events split across writes, a character split across
 * two, CRLF lines, comments and other fields, `data` over several lines,
 * tool calls in fragments and out of order.
 */
describe('the Chat Completions client reads streams as the openai package does', () => {
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

  const ours = () =>
    createOpenAIModel({
      apiKey: 'k',
      baseURL,
      model: 'm',
      logger: createMemoryLogger(),
      timeoutMs: 20_000,
      maxRetries: 0,
      fetch: createEndpointFetch({ baseUrl: baseURL, setting: 'agent.baseUrl' }),
    });
  const reference = () => createOpenAIPackageModel({ apiKey: 'k', baseURL, model: 'm' });

  const wires: Array<[string, Array<string | Buffer>]> = [
    [
      'one event per write',
      [`data: ${chunk({ content: 'Hel' })}\n\n`, `data: ${chunk({ content: 'lo' })}\n\n`, 'data: [DONE]\n\n'],
    ],
    [
      'events split anywhere, two in one write',
      [
        `data: ${chunk({ content: 'a' })}\n`,
        `\ndata: ${chunk({ content: 'b' })}\n\ndata: ${chunk({ content: 'c' }).slice(0, 20)}`,
        `${chunk({ content: 'c' }).slice(20)}\n\n`,
        'data: [DONE]\n\n',
      ],
    ],
    (() => {
      const bytes = Buffer.from(`data: ${chunk({ content: 'grüße 👋' })}\n\n`);
      const cut = bytes.indexOf(Buffer.from('👋')) + 2;
      return [
        'a character split across two writes',
        [bytes.subarray(0, cut), bytes.subarray(cut), Buffer.from('data: [DONE]\n\n')],
      ] as [string, Buffer[]];
    })(),
    [
      'CRLF lines, comments, ids, retry and event names',
      [
        `: keep-alive\r\nid: 1\r\nretry: 100\r\nevent: message\r\ndata: ${chunk({ content: 'x' })}\r\n\r\n`,
        'data: [DONE]\r\n\r\n',
      ],
    ],
    [
      'data over two lines',
      [
        `data: {"id":"c1","object":"chat.completion.chunk",\ndata: "created":1,"model":"m","choices":[{"index":0,"delta":{"content":"y"},"finish_reason":null}]}\n\n`,
        'data: [DONE]\n\n',
      ],
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
    ],
    ['an answer that ends without [DONE]', [`data: ${chunk({ content: 'end' })}\n\n`]],
  ];

  it.each(wires)('%s', async (_name, wire) => {
    writes = wire as string[];
    const expected = await events(reference());
    expect(expected).not.toHaveProperty('error');
    expect(await events(ours())).toEqual(expected);
  });

  it('fails where the package fails: an error in the stream', async () => {
    writes = [
      `data: ${chunk({ content: 'par' })}\n\n`,
      `data: {"error":{"message":"overloaded","type":"server_error"}}\n\n`,
    ];
    expect(await events(reference())).toEqual({ error: expect.stringContaining('overloaded') });
    expect(await events(ours())).toEqual({ error: 'the model endpoint reported an error mid-answer: overloaded' });
  });
});

describe('the Chat Completions client against the scripted server, beside the openai package', () => {
  it('sends what the package sends and reads the same answer', async () => {
    const server = await startOpenAIServer();
    try {
      const make = [
        () => createOpenAIPackageModel({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'gpt-test' }),
        () =>
          createOpenAIModel({
            apiKey: 'sk-test',
            baseURL: server.baseURL,
            model: 'gpt-test',
            logger: createMemoryLogger(),
            timeoutMs: 20_000,
            fetch: createEndpointFetch({ baseUrl: server.baseURL, setting: 'agent.baseUrl' }),
          }),
      ];
      const answers = [];
      for (const model of make) {
        server.push({ toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { q: 'x' } }], text: 'one moment' });
        answers.push(await events(model()));
      }
      expect(answers[1]).toEqual(answers[0]);
      const [theirs, mine] = server.requests;
      expect(mine!.body).toEqual(theirs!.body);
      expect(mine!.path).toBe(theirs!.path);
      expect(mine!.headers.authorization).toBe(theirs!.headers.authorization);
      expect(mine!.headers['content-type']).toBe(theirs!.headers['content-type']);
    } finally {
      await server.close();
    }
  });
});
