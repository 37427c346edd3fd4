import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted tool call; `arguments` is sent as JSON text (or as-is when a string). */
export interface ScriptedServerToolCall {
  name: string;
  arguments?: unknown;
  id?: string;
}

/**
 * One scripted response of the server:
 * - `{ text }` or `{ chunks }` answers with text (streamed in `chunks` when given; `before(i)`, when given, is
 *   awaited before chunk `i` goes out, so a test can hold the stream until the caller has seen the chunk before);
 * - `{ toolCalls, text? }` asks for tool calls (their arguments streamed in two fragments);
 * - `{ status, error }` answers with an HTTP error in OpenAI's error shape;
 * - a function computes the response from the request body.
 */
export type ScriptedCompletion =
  | { text: string; usage?: { prompt_tokens: number; completion_tokens: number } }
  | { chunks: string[]; before?: (index: number) => Promise<void> }
  | { toolCalls: ScriptedServerToolCall[]; text?: string; usage?: { prompt_tokens: number; completion_tokens: number } }
  | { status: number; error: { message: string; type?: string } }
  | ((body: ChatRequestBody) => ScriptedCompletion);

/** The parts of a Chat Completions request body tests assert on. */
export interface ChatRequestBody {
  model: string;
  stream?: boolean;
  messages: Array<{ role: string; content?: string | null; tool_calls?: unknown[]; tool_call_id?: string }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  [key: string]: unknown;
}

/** A request the server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: ChatRequestBody;
  /** Resolves when the caller closed the connection before the answer was complete (a call it stopped). */
  abandoned: Promise<void>;
}

/** A running scripted server; `baseURL` ends in `/v1`, ready for the `openai` client. */
export interface OpenAIServer {
  baseURL: string;
  port: number;
  requests: RecordedRequest[];
  /** Requests that arrived when no response was left (each also got an HTTP 500). */
  unexpected: RecordedRequest[];
  push(...responses: ScriptedCompletion[]): void;
  readonly remaining: number;
  close(): Promise<void>;
}

/**
 * Starts a scripted OpenAI-compatible HTTP server on 127.0.0.1, port 0,
 * serving `POST /v1/chat/completions` streamed (SSE, with tool-call deltas)
 * or not, and recording each request so tests can check what the real
 * `openai` client sent. A request with no response left gets `otherwise`
 * when given (a model that answers every request alike); else an HTTP 500
 * naming the problem, and it is kept in `unexpected`.
 */
export async function startOpenAIServer(
  responses: ScriptedCompletion[] = [],
  options: { otherwise?: ScriptedCompletion } = {},
): Promise<OpenAIServer> {
  const queue = [...responses];
  const requests: RecordedRequest[] = [];
  const unexpected: RecordedRequest[] = [];
  let counter = 0;

  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      let body: ChatRequestBody;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as ChatRequestBody;
      } catch {
        return sendError(res, 400, 'request body is not JSON');
      }
      const abandoned = new Promise<void>((resolve) =>
        res.once('close', () => {
          if (!res.writableFinished) resolve();
        }),
      );
      const record: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        abandoned,
      };
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions'))
        return sendError(res, 404, `no route ${req.method} ${req.url}`);
      requests.push(record);
      const next = queue.shift() ?? options.otherwise;
      if (!next) {
        unexpected.push(record);
        return sendError(res, 500, `openaiServer: no scripted response left for request #${requests.length}`);
      }
      counter += 1;
      void reply(res, resolve(next, body), body, `chatcmpl-${counter}`).catch((err: unknown) => {
        res.destroy(err instanceof Error ? err : new Error(String(err)));
      });
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    unexpected,
    push: (...more) => void queue.push(...more),
    get remaining() {
      return queue.length;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

type Plain = Exclude<ScriptedCompletion, (body: ChatRequestBody) => ScriptedCompletion>;

function resolve(response: ScriptedCompletion, body: ChatRequestBody): Plain {
  return typeof response === 'function' ? resolve(response(body), body) : response;
}

function sendError(res: http.ServerResponse, status: number, message: string, type = 'server_error'): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type, code: null, param: null } }));
}

async function reply(res: http.ServerResponse, response: Plain, body: ChatRequestBody, id: string): Promise<void> {
  if ('error' in response) return sendError(res, response.status, response.error.message, response.error.type);
  const text = 'chunks' in response ? response.chunks.join('') : (response.text ?? '');
  const toolCalls = ('toolCalls' in response ? response.toolCalls : []).map((c, i) => ({
    id: c.id ?? `call_${id}_${i}`,
    name: c.name,
    arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
  }));
  const usage = ('usage' in response && response.usage) || { prompt_tokens: 10, completion_tokens: 5 };
  const finish = toolCalls.length ? 'tool_calls' : 'stop';
  const base = { id, created: Math.floor(Date.now() / 1000), model: body.model };

  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            finish_reason: finish,
            message: {
              role: 'assistant',
              content: text || null,
              ...(toolCalls.length
                ? {
                    tool_calls: toolCalls.map((c) => ({
                      id: c.id,
                      type: 'function',
                      function: { name: c.name, arguments: c.arguments },
                    })),
                  }
                : {}),
            },
          },
        ],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      }),
    );
    return;
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const send = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    res.write(
      `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`,
    );
  send({ role: 'assistant', content: '' });
  const pieces = 'chunks' in response ? response.chunks : text ? [text] : [];
  for (const [index, piece] of pieces.entries()) {
    if ('before' in response && response.before) await response.before(index);
    send({ content: piece });
  }
  toolCalls.forEach((call, index) => {
    // As OpenAI does: id and name first, then the arguments in fragments.
    const half = Math.ceil(call.arguments.length / 2);
    send({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
    send({ tool_calls: [{ index, function: { arguments: call.arguments.slice(0, half) } }] });
    send({ tool_calls: [{ index, function: { arguments: call.arguments.slice(half) } }] });
  });
  send({}, finish);
  const options = body.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage) {
    res.write(
      `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } })}\n\n`,
    );
  }
  res.end('data: [DONE]\n\n');
}

/** The server's counterparts of `scriptedModel.ts`'s turns: an answer. */
export const say = (text: string): ScriptedCompletion => ({ text });

/** A call of one tool with `args`. */
export const callTool = (name: string, args: unknown = {}): ScriptedCompletion => ({
  toolCalls: [{ name, arguments: args }],
});

/** A call of `transfer_to_agent` for `agentName`. */
export const transferTo = (agentName: string): ScriptedCompletion =>
  callTool('transfer_to_agent', { agent_name: agentName });

/**
 * The `agent` configuration that sends a node's model calls to `server`, through the node's own Chat Completions
 * client: what a whole-node test plays its model with.
 * @example
 * const model = await startOpenAIServer([say('hi')]);
 * const config = resolveConfig({ dataDir, agent: scriptedAgent(model) });
 */
export function scriptedAgent(server: OpenAIServer): {
  provider: 'openai';
  apiKey: string;
  baseUrl: string;
  model: string;
} {
  return { provider: 'openai', apiKey: 'sk-scripted-model', baseUrl: server.baseURL, model: 'scripted' };
}
