import { getEventListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { z } from 'zod';
import { createOpenAIModel, ModelRequestError } from '../../src/llm/openai';
import type { Model, ModelEvent, ModelRequest } from '../../src/llm/model';
import { createMemoryLogger } from '../../src/log/logger';
import { defineTool, toolJsonSchema } from '../../src/agent/tool';
import { createRunner } from '../../src/agent/runner';
import { runToEnd } from '../../src/agent/turn';
import { startOpenAIServer, type OpenAIServer } from '../support/openaiServer';
import { makeAgent, openStore } from '../agent/helpers';
import { OWNER } from '../../src/principal';
import { createEndpointFetch } from '../../src/net/endpoint';
import { waitFor } from '../support/waitFor';

const API_KEY = 'sk-test-abcdefghijklmnop1234';

async function drain(model: Model, request: Partial<ModelRequest> = {}): Promise<ModelEvent[]> {
  const events: ModelEvent[] = [];
  for await (const e of model.stream({
    agentName: 'lango-agent',
    instruction: 'You are terse.',
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    signal: new AbortController().signal,
    ...request,
  })) {
    events.push(e);
  }
  return events;
}

describe('openai provider against a scripted OpenAI-compatible server', () => {
  let server: OpenAIServer;
  let model: Model;
  beforeEach(async () => {
    server = await startOpenAIServer();
    model = createOpenAIModel({
      apiKey: API_KEY,
      baseURL: server.baseURL,
      model: 'gpt-test',
      logger: createMemoryLogger(),
      timeoutMs: 20_000,
      maxRetries: 0,
      // The composition root's fetch: the address policy, undici `request` on a pinned dispatcher.
      fetch: createEndpointFetch({ baseUrl: server.baseURL, setting: 'agent.baseUrl' }),
    });
  });
  afterEach(() => server.close());

  it('streams text deltas and usage, sending the system prompt, model and key', async () => {
    server.push({ chunks: ['Hel', 'lo', '!'] });
    const events = await drain(model);
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e.type === 'text_delta' ? e.delta : ''))).toEqual([
      'Hel',
      'lo',
      '!',
    ]);
    expect(events).toContainEqual({ type: 'usage', inputTokens: 10, outputTokens: 5 });
    const [request] = server.requests;
    expect(request!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request!.body).toMatchObject({
      model: 'gpt-test',
      stream: true,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(request!.body.tools).toBeUndefined();
  });

  it('offers tools as functions with their JSON schema and joins streamed tool-call fragments', async () => {
    const tool = defineTool({
      name: 'fs_read',
      description: 'Reads a file.',
      parameters: z.object({ path: z.string() }),
      execute: async () => '',
    });
    server.push({
      toolCalls: [
        { id: 'call_a', name: 'fs_read', arguments: { path: 'notes/today.md' } },
        { id: 'call_b', name: 'transfer_to_agent', arguments: { agent_name: 'operator' } },
      ],
    });
    const events = await drain(model, {
      tools: [{ name: tool.name, description: tool.description, parameters: toolJsonSchema(tool) }],
      messages: [
        { role: 'user', content: 'read it' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'old', name: 'fs_read', arguments: '{"path":"a"}' }],
          author: 'operator',
        },
        { role: 'tool', toolCallId: 'old', name: 'fs_read', content: 'A' },
      ],
    });
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([
      { type: 'tool_call', call: { id: 'call_a', name: 'fs_read', arguments: '{"path":"notes/today.md"}' } },
      { type: 'tool_call', call: { id: 'call_b', name: 'transfer_to_agent', arguments: '{"agent_name":"operator"}' } },
    ]);
    const body = server.requests[0]!.body;
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'fs_read', description: 'Reads a file.', parameters: toolJsonSchema(tool) },
      },
    ]);
    expect(body.messages.slice(1)).toEqual([
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'old', type: 'function', function: { name: 'fs_read', arguments: '{"path":"a"}' } }],
      },
      { role: 'tool', tool_call_id: 'old', content: 'A' },
    ]);
  });

  it('turns an HTTP error into a readable message without the API key', async () => {
    server.push({
      status: 401,
      error: { message: `Incorrect API key provided: ${API_KEY}.`, type: 'invalid_request_error' },
    });
    const error = await drain(model).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelRequestError);
    expect((error as Error).message).toMatch(/^the model endpoint answered HTTP 401: Incorrect API key provided: /);
    expect((error as Error).message).not.toContain(API_KEY);
  });

  it('reports an unreachable endpoint by its address', async () => {
    const closed = await startOpenAIServer();
    await closed.close();
    const offline = createOpenAIModel({
      apiKey: API_KEY,
      baseURL: closed.baseURL,
      model: 'm',
      logger: createMemoryLogger(),
      timeoutMs: 20_000,
      maxRetries: 0,
      fetch: createEndpointFetch({ baseUrl: closed.baseURL, setting: 'agent.baseUrl' }),
    });
    await expect(drain(offline)).rejects.toThrow(`cannot reach the model endpoint ${closed.baseURL}`);
  });

  it('throws AbortError when the request is aborted', async () => {
    server.push({ text: 'never read' });
    const controller = new AbortController();
    controller.abort();
    await expect(drain(model, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('stops reading the answer mid-stream when the request is aborted', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    server.push({ chunks: ['one', 'two'], before: (index) => (index === 1 ? held : Promise.resolve()) });
    const controller = new AbortController();
    const seen: string[] = [];
    const reading = (async () => {
      for await (const e of model.stream({
        agentName: 'lango-agent',
        instruction: 'You are terse.',
        messages: [{ role: 'user', content: 'hi' }],
        tools: [],
        signal: controller.signal,
      })) {
        if (e.type === 'text_delta') seen.push(e.delta);
      }
    })();
    try {
      await waitFor(() => seen.length === 1, 20_000, 'the first delta');
      controller.abort();
      await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
      expect(seen).toEqual(['one']);
    } finally {
      release();
    }
  });

  it('drives a delegated tool call through the runner end to end', async () => {
    const store = openStore();
    try {
      const shell = defineTool({
        name: 'exec_shell',
        description: 'Runs a command.',
        parameters: z.object({ command: z.string() }),
        execute: async ({ command }) => ({ exitCode: 0, stdout: `${command.replace(/^echo /, '')}\n` }),
      });
      const operator = makeAgent({ name: 'operator', model, tools: [shell] });
      const root = makeAgent({ name: 'lango-orchestrator', model, subAgents: [operator] });
      server.push(
        { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'operator' } }] },
        { toolCalls: [{ name: 'exec_shell', arguments: { command: 'echo hi' } }] },
        { text: 'The command printed hi.' },
      );
      const runner = createRunner({
        tree: { current: () => root },
        sessions: store.sessions,
        logger: store.logger,
        maxDelegationRounds: 5,
        maxTurnsPerAgent: 10,
      });
      const result = await runToEnd(runner, { principal: OWNER, sessionId: 's1', text: 'run echo hi' });
      expect(result).toEqual({ status: 'completed', text: 'The command printed hi.', author: 'operator' });
      const last = server.requests[2]!.body.messages.at(-1);
      expect(last).toMatchObject({ role: 'tool', content: '{"exitCode":0,"stdout":"hi\\n"}' });
      expect(server.requests[1]!.body.tools!.map((t) => t.function.name)).toEqual(['exec_shell', 'transfer_to_agent']);
    } finally {
      await store.close();
    }
  });

  it("lets go of the turn's signal once each answer has ended", async () => {
    const turn = new AbortController();
    for (let i = 0; i < 12; i++) {
      server.push({ chunks: ['a', 'b'] });
      await drain(model, { signal: turn.signal });
      expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
    }
  });

  it('tries again after a 5xx or 429 before the answer starts, and not after a 4xx', async () => {
    const retrying = createOpenAIModel({
      apiKey: API_KEY,
      baseURL: server.baseURL,
      model: 'gpt-test',
      logger: createMemoryLogger(),
      timeoutMs: 20_000,
      maxRetries: 2,
      fetch: createEndpointFetch({ baseUrl: server.baseURL, setting: 'agent.baseUrl' }),
    });
    server.push(
      { status: 503, error: { message: 'busy' } },
      { status: 429, error: { message: 'slow down' } },
      { chunks: ['third ', 'time'] },
    );
    const events = await drain(retrying);
    expect(events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : [])).join('')).toBe('third time');
    expect(server.requests).toHaveLength(3);

    server.push({ status: 400, error: { message: 'bad tool schema' } }, { text: 'never asked' });
    await expect(drain(retrying)).rejects.toThrow('the model endpoint answered HTTP 400: bad tool schema');
    expect(server.requests).toHaveLength(4);
    expect(server.remaining).toBe(1);
  });

  it('also answers non-streaming requests (for other clients of the test server)', async () => {
    server.push({ toolCalls: [{ id: 'c1', name: 'fs_read', arguments: { path: 'x' } }] });
    const client = new OpenAI({ apiKey: API_KEY, baseURL: server.baseURL, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(completion.choices[0]!.message.tool_calls).toEqual([
      { id: 'c1', type: 'function', function: { name: 'fs_read', arguments: '{"path":"x"}' } },
    ]);
    expect(server.unexpected).toEqual([]);
  });
});

describe('openai provider through the outbound address policy', () => {
  let raw: http.Server;
  let origin: string;
  let handle: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  beforeEach(async () => {
    raw = http.createServer((req, res) => handle(req, res));
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    raw.closeAllConnections();
    await new Promise<void>((resolve) => raw.close(() => resolve()));
  });

  const modelAt = (baseURL: string, timeoutMs = 20_000): Model =>
    createOpenAIModel({
      apiKey: API_KEY,
      baseURL,
      model: 'm',
      logger: createMemoryLogger(),
      timeoutMs,
      maxRetries: 0,
      fetch: createEndpointFetch({ baseUrl: `${origin}/v1`, setting: 'agent.baseUrl' }),
    });

  it('refuses a host other than the configured one before connecting', async () => {
    let requests = 0;
    handle = (_req, res) => {
      requests += 1;
      res.end();
    };
    const elsewhere = modelAt(`${origin.replace('127.0.0.1', 'localhost')}/v1`);
    const error = await drain(elsewhere).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelRequestError);
    expect((error as Error).message).toMatch(
      /^cannot reach the model endpoint .*refused by the outbound address policy/,
    );
    expect(requests).toBe(0);
  });

  it('refuses a redirect and names the endpoint, not the path', async () => {
    handle = (req, res) => {
      req.resume();
      res.writeHead(307, { location: 'http://127.0.0.1:1/v1/chat/completions' }).end();
    };
    const error = await drain(modelAt(`${origin}/v1`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelRequestError);
    expect((error as Error).message).toBe(
      `cannot reach the model endpoint ${origin}/v1: ${origin} answered with a redirect, refused: this endpoint needs none`,
    );
  });

  it('gives up on an endpoint that never answers, by its timeout', async () => {
    // The endpoint never answers: only the 300 ms timeout can end the call, and the message says it did.
    handle = (req) => req.resume();
    const error = await drain(modelAt(`${origin}/v1`, 300)).catch((e: unknown) => e);
    expect((error as Error).message).toBe(`the model endpoint ${origin}/v1 did not answer in time`);
  });
});
