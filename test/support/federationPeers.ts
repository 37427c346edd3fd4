import express from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import type { AgentCard, Message, Part, Task } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import * as v03server from '@a2a-js/sdk-v03/server';
import * as v03express from '@a2a-js/sdk-v03/server/express';
import type { RemoteAgent } from '../../src/agent/agent';
import { checkInboundHops } from '../../src/federation/hops';
import { OWNER } from '../../src/principal';

/**
 * Real A2A peers on 127.0.0.1 port 0 for federation tests: SDK 1.3 servers
 * (v1.0, with the v0.3 compat layer) and SDK 0.3.14 servers (v0.3 only),
 * playing a few behaviours, recording what reached them.
 */

/**
 * What a peer does with a message:
 * - echo: completes with artifact `echo: <text>`
 * - ask: first asks "Which city?" (input-required), then completes with `weather in <reply>`
 * - slow: works until cancelled (then `canceled`) or for 20 s
 * - forward: checks the hop metadata like a lango node, then delegates to `forward`
 * - auth: first asks for authorization (auth-required, A2A §7.6.1), then completes with `authorized: <reply>`
 */
export type PeerBehaviour = 'echo' | 'ask' | 'slow' | 'forward' | 'auth';

/** What the `auth` behaviour asks its caller for. */
export const AUTH_REQUEST = 'Authorize the calendar at https://idp.example/consent?request=42, then say done.';

/** One JSON-RPC request as the peer saw it. */
export interface SeenRequest {
  method: string;
  headers: http.IncomingHttpHeaders;
  params: Record<string, unknown>;
}

/** A running test peer. */
export interface TestPeer {
  url: string;
  origin: string;
  port: number;
  requests: SeenRequest[];
  /** Task ids the peer was asked to cancel. */
  cancelled: string[];
  /** Resolves when the peer has started `slow` work (so a test can abort mid-task). */
  working: Promise<void>;
  /** Wires the `forward` behaviour's onward remote agent (after both ends exist). */
  setForward(agent: RemoteAgent, selfId?: string): void;
  close(): Promise<void>;
}

/** Options of {@link startPeer}. */
export interface PeerOptions {
  name?: string;
  behaviour?: PeerBehaviour;
  streaming?: boolean;
  /** `0.3`: an @a2a-js/sdk 0.3.14 server; default `1.0` (SDK 1.3 with legacy compat). */
  version?: '1.0' | '0.3';
  /** Rewrites the card before it is served (wrong origin, signatures…). */
  card?: (card: Record<string, unknown>) => Record<string, unknown>;
  maxHops?: number;
  /** Listen on this port (a peer that comes back where it was); default any free port. */
  port?: number;
}

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
const now = () => new Date().toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function agentMessage(value: string, taskId: string, contextId: string): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [text(value)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function messageText(message: Message | undefined): string {
  return (message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

/** Listens an express app on 127.0.0.1:0 and returns the server and its base URL. */
export async function listen(
  app: express.Express | http.RequestListener,
  atPort = 0,
): Promise<{ server: http.Server; origin: string; port: number }> {
  const server = http.createServer(app as http.RequestListener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(atPort, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return { server, origin: `http://127.0.0.1:${port}`, port };
}

/** Closes a server, dropping open connections (streams) at once. */
export async function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A port on 127.0.0.1 where nothing listens (bound, then released). */
export async function deadPort(): Promise<number> {
  const { server, port } = await listen((_req: http.IncomingMessage, res: http.ServerResponse) => res.end());
  await closeServer(server);
  return port;
}

/** Starts an A2A peer with `options.behaviour`. */
export async function startPeer(options: PeerOptions = {}): Promise<TestPeer> {
  const behaviour = options.behaviour ?? 'echo';
  const app = express();
  const { server, origin, port } = await listen(app, options.port);
  const url = `${origin}/`;
  const requests: SeenRequest[] = [];
  const cancelled: string[] = [];
  let markWorking: () => void = () => {};
  const working = new Promise<void>((r) => (markWorking = r));
  let forward: { agent: RemoteAgent; selfId: string } | undefined;
  app.use(express.json({ limit: '1mb' }));
  app.use((req, _res, next) => {
    if (req.method === 'POST' && req.body && typeof req.body.method === 'string') {
      requests.push({ method: req.body.method, headers: req.headers, params: req.body.params ?? {} });
    }
    next();
  });
  const ctx = {
    behaviour,
    cancelled,
    markWorking,
    getForward: () => forward,
    selfId: origin,
    maxHops: options.maxHops ?? 4,
    closed: false,
  };
  if (options.version === '0.3') mountV03(app, url, options, ctx);
  else mountV1(app, url, options, ctx);
  return {
    url,
    origin,
    port,
    requests,
    cancelled,
    working,
    setForward: (agent, selfId = origin) => (forward = { agent, selfId }),
    close: () => {
      ctx.closed = true;
      return closeServer(server);
    },
  };
}

interface BehaviourContext {
  behaviour: PeerBehaviour;
  cancelled: string[];
  markWorking: () => void;
  getForward: () => { agent: RemoteAgent; selfId: string } | undefined;
  selfId: string;
  maxHops: number;
  /** Set when the peer shuts down, so `slow` work stops and leaves no timer behind. */
  closed: boolean;
}

/** Runs one behaviour; returns the final state and text (v1.0 vocabulary). */
async function play(
  ctx: BehaviourContext,
  input: { text: string; taskId: string; continuing: boolean; metadata: Record<string, unknown> | undefined },
  progress: (note: string) => void,
): Promise<{ state: 'completed' | 'input-required' | 'auth-required' | 'failed' | 'canceled'; text: string }> {
  switch (ctx.behaviour) {
    case 'echo':
      return { state: 'completed', text: `echo: ${input.text}` };
    case 'ask':
      return input.continuing
        ? { state: 'completed', text: `weather in ${input.text}: sunny` }
        : { state: 'input-required', text: 'Which city?' };
    case 'auth':
      return input.continuing
        ? { state: 'completed', text: `authorized: ${input.text}` }
        : { state: 'auth-required', text: AUTH_REQUEST };
    case 'slow': {
      progress('step 1');
      ctx.markWorking();
      for (let i = 0; i < 200; i++) {
        if (ctx.cancelled.includes(input.taskId)) return { state: 'canceled', text: 'cancelled by the caller' };
        if (ctx.closed) return { state: 'failed', text: 'peer shut down' };
        await sleep(100);
      }
      return { state: 'completed', text: 'slow work done' };
    }
    case 'forward': {
      const check = checkInboundHops(input.metadata, ctx.selfId, ctx.maxHops);
      if (!check.ok) return { state: 'failed', text: `refused: ${check.reason}` };
      const onward = ctx.getForward();
      if (!onward) return { state: 'failed', text: 'no onward agent' };
      const run = onward.agent.invoke({
        text: input.text,
        context: [],
        principal: OWNER,
        sessionId: 's',
        signal: new AbortController().signal,
        state: {},
        metadata: input.metadata ?? {},
      });
      let step = await run.next();
      while (!step.done) step = await run.next();
      const outcome = step.value;
      return outcome.status === 'failed'
        ? { state: 'failed', text: outcome.reason }
        : { state: 'completed', text: outcome.text };
    }
  }
}

function baseCardV1(name: string, url: string, streaming: boolean): AgentCard {
  return {
    name,
    description: `Test peer ${name}. It answers weather and echo requests.`,
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
    ],
    provider: undefined,
    version: '1.0.0',
    documentationUrl: '',
    capabilities: { streaming, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'weather',
        name: 'Weather forecast',
        description: 'Forecasts the weather',
        tags: ['weather', 'forecast'],
        examples: ['What is the weather in Paris tomorrow?'],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

function mountV1(app: express.Express, url: string, options: PeerOptions, ctx: BehaviourContext): void {
  const streaming = options.streaming ?? true;
  const card = baseCardV1(options.name ?? 'peer', url, streaming);
  // Rewritten at every request, so a test can change what the peer serves (e.g. sign it once its URL is known).
  const served = async () => (options.card ? options.card(JSON.parse(JSON.stringify(card))) : card) as AgentCard;
  const STATES = {
    completed: TaskState.TASK_STATE_COMPLETED,
    'input-required': TaskState.TASK_STATE_INPUT_REQUIRED,
    'auth-required': TaskState.TASK_STATE_AUTH_REQUIRED,
    failed: TaskState.TASK_STATE_FAILED,
    canceled: TaskState.TASK_STATE_CANCELED,
  };
  const executor: AgentExecutor = {
    async execute(rc: RequestContext, bus: ExecutionEventBus) {
      const { taskId, contextId } = rc;
      const task: Task = rc.task ?? {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
        artifacts: [],
        history: [rc.userMessage],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(task));
      const status = (state: TaskState, note?: string) =>
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: { state, message: note ? agentMessage(note, taskId, contextId) : undefined, timestamp: now() },
            metadata: undefined,
          }),
        );
      status(TaskState.TASK_STATE_WORKING, 'working on it');
      const result = await play(
        ctx,
        { text: messageText(rc.userMessage), taskId, continuing: Boolean(rc.task), metadata: rc.userMessage.metadata },
        (note) => status(TaskState.TASK_STATE_WORKING, note),
      );
      if (result.state === 'completed') {
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            append: false,
            lastChunk: true,
            metadata: undefined,
            artifact: {
              artifactId: randomUUID(),
              name: 'answer',
              description: '',
              parts: [text(result.text)],
              metadata: undefined,
              extensions: [],
            },
          }),
        );
        status(TaskState.TASK_STATE_COMPLETED);
      } else {
        status(STATES[result.state], result.text);
      }
    },
    cancelTask: async (taskId: string) => {
      ctx.cancelled.push(taskId);
    },
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: served }));
  app.use(
    jsonRpcHandler({
      requestHandler: handler,
      userBuilder: UserBuilder.noAuthentication,
      legacyCompat: { enabled: true },
    }),
  );
}

function mountV03(app: express.Express, url: string, options: PeerOptions, ctx: BehaviourContext): void {
  const base = {
    name: options.name ?? 'legacy',
    description: 'A v0.3-only test peer that echoes.',
    url,
    preferredTransport: 'JSONRPC',
    protocolVersion: '0.3.0',
    version: '0.3.14',
    capabilities: { streaming: options.streaming ?? false, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes text', tags: ['echo'], examples: ['repeat after me'] }],
  };
  const card = options.card ? options.card(base) : base;
  type V03Part = { kind: string; text?: string };
  const executor = {
    async execute(
      rc: {
        taskId: string;
        contextId: string;
        task?: unknown;
        userMessage: { parts: V03Part[]; metadata?: Record<string, unknown> };
      },
      bus: v03server.ExecutionEventBus,
    ) {
      const { taskId, contextId } = rc;
      const input = rc.userMessage.parts.map((p) => p.text ?? '').join('');
      const result = await play(
        ctx,
        { text: input, taskId, continuing: Boolean(rc.task), metadata: rc.userMessage.metadata },
        () => {},
      );
      const state = result.state === 'input-required' ? 'input-required' : result.state;
      bus.publish({
        kind: 'task',
        id: taskId,
        contextId,
        status: {
          state,
          timestamp: now(),
          message: {
            kind: 'message',
            role: 'agent',
            messageId: randomUUID(),
            taskId,
            contextId,
            parts: [{ kind: 'text', text: result.text }],
          },
        },
        artifacts:
          result.state === 'completed'
            ? [{ artifactId: randomUUID(), name: 'answer', parts: [{ kind: 'text', text: result.text }] }]
            : [],
        history: [],
      } as never);
      bus.finished();
    },
    cancelTask: async (taskId: string) => {
      ctx.cancelled.push(taskId);
    },
  };
  const handler = new v03server.DefaultRequestHandler(
    card as never,
    new v03server.InMemoryTaskStore(),
    executor as never,
  );
  app.use('/.well-known/agent-card.json', v03express.agentCardHandler({ agentCardProvider: handler }));
  app.use(v03express.jsonRpcHandler({ requestHandler: handler, userBuilder: v03express.UserBuilder.noAuthentication }));
}

/** A bare HTTP server answering every request with `handler` (malformed cards, hangs…). */
export async function startRawServer(
  handler: http.RequestListener,
): Promise<{ origin: string; close(): Promise<void> }> {
  const { server, origin } = await listen(handler);
  return { origin, close: () => closeServer(server) };
}
