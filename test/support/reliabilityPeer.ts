import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role } from '@a2a-js/sdk';
import type { AgentCard } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { say, startOpenAIServer, transferTo, type OpenAIServer } from './openaiServer';

/** How the peer behaves for the next A2A call; its card is always served. */
export type PeerMode = 'ok' | 'slow' | 'garbage';

/** A bare `@a2a-js/sdk` peer on 127.0.0.1 that can be slowed, made to answer garbage, killed and restarted on the same port. */
export interface FaultyPeer {
  readonly cardUrl: string;
  mode: PeerMode;
  /** Calls that reached the executor. */
  readonly calls: number;
  /** Closes the listener and every open connection (the peer "dies"). */
  kill(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a {@link FaultyPeer}; `slowMs` is how long a slow answer takes. */
export async function startFaultyPeer(options: { slowMs: number }): Promise<FaultyPeer> {
  const state = { mode: 'ok' as PeerMode, calls: 0 };
  const timers = new Set<NodeJS.Timeout>();
  const executor: AgentExecutor = {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      state.calls++;
      if (state.mode === 'slow') {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            resolve();
          }, options.slowMs);
          timers.add(timer);
        });
      }
      const text = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      bus.publish(
        AgentEvent.message({
          messageId: `pong-${state.calls}`,
          contextId: ctx.contextId,
          taskId: '',
          role: Role.ROLE_AGENT,
          parts: [
            {
              content: { $case: 'text', value: `pong: ${text}` },
              metadata: undefined,
              filename: '',
              mediaType: 'text/plain',
            },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        }),
      );
    },
    cancelTask: async () => undefined,
  };
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  const card = {
    name: 'faulty',
    description: 'Answers pong to anything (a test peer).',
    supportedInterfaces: [
      { url: `${base}/`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    provider: undefined,
    version: '1.0.0',
    documentationUrl: '',
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [
      {
        id: 'pong',
        name: 'Pong',
        description: 'Answers pong.',
        tags: ['pong'],
        examples: [],
        inputModes: ['text'],
        outputModes: ['text'],
        securityRequirements: [],
      },
    ],
    signatures: [],
  } as AgentCard;
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.post('/', (_req, res, next) => {
    if (state.mode !== 'garbage') return next();
    res.status(200).type('application/json').send('{"jsonrpc":"2.0","id":1,"result":<<<garbage>>>');
  });
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  server.on('request', app);

  const stopListening = () =>
    new Promise<void>((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    cardUrl: `${base}/${AGENT_CARD_PATH}`,
    get mode() {
      return state.mode;
    },
    set mode(mode: PeerMode) {
      state.mode = mode;
    },
    get calls() {
      return state.calls;
    },
    kill: stopListening,
    restart: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve())),
    close: stopListening,
  };
}

/** How the runtime's notes to the model begin (`handBack` in `src/agent/runner.ts`). */
const RUNTIME_NOTE = '[note from the runtime]';

/**
 * The orchestrator's model, played by the scripted Chat Completions server
 * through the node's own client: it always delegates to `target` (a remote
 * agent) and then repeats what came back, so every answer shows what the
 * delegated call produced — a peer's reply or the node's failure text.
 * @example
 * const model = await startRelayModel('faulty');
 * const node = await startReliabilityNode({ config: { agent: scriptedAgent(model), a2a: { remoteAgents } } });
 */
export function startRelayModel(target: string): Promise<OpenAIServer> {
  return startOpenAIServer([], {
    otherwise: (body) => {
      const last = body.messages.at(-1);
      const content = last?.content ?? '';
      if (last?.role === 'user' && !content.startsWith(RUNTIME_NOTE)) return transferTo(target);
      return say(`relayed: ${content}`);
    },
  });
}
