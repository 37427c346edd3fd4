/**
 * The baseline: `@a2a-js/sdk` 1.3.0 wired by hand the SDK's documented way
 * (AgentExecutor + DefaultRequestHandler + InMemoryTaskStore + the express
 * jsonRpcHandler / agentCardHandler), adapted from
 * ../shared/bench-anchors/src/sdk-server.ts.
 *
 * MODE=task (default): Task submitted → working → artifact → completed, one
 * stored task per request. MODE=message: one agent Message, nothing stored.
 * DELAY_MS: a pause before the executor starts (a stand-in for a slow agent,
 * used by the delegation-hop scenario so both sides do the same work).
 * MODE=chunks: a task whose answer streams as CHUNKS `artifact-update` chunks
 * (`append`, `lastChunk`), the first after FIRST_MS, then one every
 * INTERVAL_MS, each text a stamp like scriptedModel.ts writes: the streamed
 * answer with no model hop and no store, for the concurrent-streams scenario.
 * MODE=relay: the same task shape, but each chunk is a text delta of the
 * scripted model at MODEL_URL read with the real `openai` client (default
 * fetch): the least an SDK agent relaying a model's streamed answer does.
 * GRPC_PORT (0: a free one): the same request handler also served over gRPC
 * by the SDK's own `grpcService` (the card lists it; the ready line names it
 * as `grpcAddress`), for the gRPC greeting scenario.
 * Prints `{"ready":true,...}` on stdout once listening; SIGUSR2 (with
 * --expose-gc) runs a full GC and prints process.memoryUsage().
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import OpenAI from 'openai';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import type { AgentCard, Part, Task } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import * as grpc from '@grpc/grpc-js';
import { A2AService, grpcService, UserBuilder as GrpcUserBuilder } from '@a2a-js/sdk/server/grpc';
import { answerMemoryProbe } from './memoryStats';
import { wallClockMs } from './stats';

const PORT = Number(process.env.PORT ?? 0);
const MODES = ['task', 'message', 'chunks', 'relay'] as const;
const MODE = MODES.find((mode) => mode === process.env.MODE) ?? 'task';
const DELAY_MS = Number(process.env.DELAY_MS ?? 0);
const CHUNKS = Number(process.env.CHUNKS ?? 20);
const FIRST_MS = Number(process.env.FIRST_MS ?? 0);
const INTERVAL_MS = Number(process.env.INTERVAL_MS ?? 200);

const textPart = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
const now = () => new Date().toISOString();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class MessageExecutor implements AgentExecutor {
  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    if (DELAY_MS) await sleep(DELAY_MS);
    bus.publish(
      AgentEvent.message({
        messageId: randomUUID(),
        contextId: ctx.contextId,
        taskId: '',
        role: Role.ROLE_AGENT,
        parts: [textPart('hello')],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      }),
    );
  }
  cancelTask = async (): Promise<void> => {};
}

class TaskExecutor implements AgentExecutor {
  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = ctx;
    const task: Task = ctx.task ?? {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
      artifacts: [],
      history: [ctx.userMessage],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    if (DELAY_MS) await sleep(DELAY_MS);
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: randomUUID(),
          name: 'result',
          description: '',
          parts: [textPart('hello')],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
  }
  cancelTask = async (): Promise<void> => {};
}

/** The streamed task's first event: working, the caller's message its history. */
const workingTask = (ctx: RequestContext) =>
  AgentEvent.task({
    id: ctx.taskId,
    contextId: ctx.contextId,
    status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: now() },
    artifacts: [],
    history: [ctx.userMessage],
    metadata: undefined,
  });

/** One chunk of the streamed answer artifact. */
const answerChunk = (ctx: RequestContext, artifactId: string, text: string, append: boolean, lastChunk: boolean) =>
  AgentEvent.artifactUpdate({
    taskId: ctx.taskId,
    contextId: ctx.contextId,
    artifact: {
      artifactId,
      name: 'answer',
      description: '',
      parts: [textPart(text)],
      metadata: undefined,
      extensions: [],
    },
    append,
    lastChunk,
    metadata: undefined,
  });

/** The streamed task's last event. */
const finalStatus = (ctx: RequestContext, state: TaskState) =>
  AgentEvent.statusUpdate({
    taskId: ctx.taskId,
    contextId: ctx.contextId,
    status: { state, message: undefined, timestamp: now() },
    metadata: undefined,
  });

class ChunkExecutor implements AgentExecutor {
  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    bus.publish(workingTask(ctx));
    const artifactId = randomUUID();
    await sleep(FIRST_MS);
    for (let seq = 0; seq < CHUNKS; seq++) {
      if (seq > 0) await sleep(INTERVAL_MS);
      const stamp = `[[c${seq}@${wallClockMs().toFixed(3)}]] `;
      bus.publish(answerChunk(ctx, artifactId, stamp, seq > 0, seq === CHUNKS - 1));
    }
    bus.publish(finalStatus(ctx, TaskState.TASK_STATE_COMPLETED));
  }
  cancelTask = async (): Promise<void> => {};
}

class RelayExecutor implements AgentExecutor {
  private readonly model = new OpenAI({ baseURL: process.env.MODEL_URL, apiKey: 'bench-key', maxRetries: 0 });

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    bus.publish(workingTask(ctx));
    const question = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    const artifactId = randomUUID();
    let state = TaskState.TASK_STATE_COMPLETED;
    try {
      const stream = await this.model.chat.completions.create({
        model: 'scripted',
        messages: [{ role: 'user', content: question }],
        stream: true,
      });
      let seq = 0;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta?.content;
        if (delta) bus.publish(answerChunk(ctx, artifactId, delta, seq++ > 0, false));
      }
    } catch {
      state = TaskState.TASK_STATE_FAILED;
    }
    bus.publish(finalStatus(ctx, state));
  }
  cancelTask = async (): Promise<void> => {};
}

function agentCard(base: string): AgentCard {
  return {
    name: 'Baseline Agent',
    description: 'Bare @a2a-js/sdk server for benchmarks.',
    supportedInterfaces: [{ url: base, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: undefined,
    version: '1.0.0',
    documentationUrl: '',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Replies hello.',
        tags: ['perf'],
        examples: ['hi'],
        inputModes: ['text'],
        outputModes: ['text'],
        securityRequirements: [],
      },
    ],
    signatures: [],
  } as AgentCard;
}

const executors: Record<typeof MODE, () => AgentExecutor> = {
  task: () => new TaskExecutor(),
  message: () => new MessageExecutor(),
  chunks: () => new ChunkExecutor(),
  relay: () => new RelayExecutor(),
};
const executor = executors[MODE]();
const card = agentCard(`http://127.0.0.1:${PORT}/`);
const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
const app = express();
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
// Only behind the cluster bench's haproxy, whose health check asks /readyz; the other scenarios' baseline has no extra route.
if (process.env.READYZ === '1') app.get('/readyz', (_req, res) => void res.send('ok'));
app.use(jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }));

answerMemoryProbe();

/** The SDK's gRPC server over the same handler, when GRPC_PORT is set: resolves with its `host:port`. */
function serveGrpc(): Promise<string | undefined> {
  if (process.env.GRPC_PORT === undefined) return Promise.resolve(undefined);
  const grpcServer = new grpc.Server();
  grpcServer.addService(A2AService, grpcService({ requestHandler, userBuilder: GrpcUserBuilder.noAuthentication }));
  return new Promise((resolve, reject) =>
    grpcServer.bindAsync(`127.0.0.1:${process.env.GRPC_PORT}`, grpc.ServerCredentials.createInsecure(), (err, port) => {
      if (err) return reject(err);
      const address = `127.0.0.1:${port}`;
      // The SDK's service checks A2A-Version against the card's GRPC interface.
      card.supportedInterfaces.push({
        url: address,
        protocolBinding: 'GRPC',
        tenant: '',
        protocolVersion: A2A_PROTOCOL_VERSION,
      });
      resolve(address);
    }),
  );
}

const server = app.listen(PORT, '127.0.0.1', (err?: Error) => {
  if (err) throw err;
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  card.supportedInterfaces[0].url = `${url}/`;
  void serveGrpc().then((grpcAddress) =>
    process.stdout.write(`${JSON.stringify({ ready: true, url, pid: process.pid, grpcAddress })}\n`),
  );
});
process.once('SIGTERM', () => {
  // Idle keep-alive connections would hold close() open until the parent's 5 s SIGKILL.
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
