import { randomUUID } from 'node:crypto';
import { SendMessageRequest, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type CallInterceptor,
  type Client,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';

/** The three v1.0 bindings the node serves (gRPC when started with a gRPC port). */
export type Binding = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

/**
 * A real `@a2a-js/sdk` 1.x client for `url`, preferring `binding`, sending
 * `headers` (credentials) on every call, the card fetch included (over gRPC
 * as the call's metadata). `tenant` picks the card's interface of that tenant.
 */
export async function a2aClient(
  url: string,
  binding: Binding,
  headers: Record<string, string> = {},
  tenant = '',
): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return fetch(input, { ...init, headers: merged });
  };
  const cardResolver = new DefaultAgentCardResolver({ fetchImpl });
  // The SDK's factory takes the last v1.0 interface of a binding (not the first, as §8.3 says): only the
  // tenant's are left for it to choose from.
  const card = await cardResolver.resolve(url);
  card.supportedInterfaces = card.supportedInterfaces.filter((i) => (i.tenant ?? '') === tenant);
  const credentials: CallInterceptor = {
    async before(args) {
      args.options = {
        ...args.options,
        serviceParameters: { ...args.options?.serviceParameters, ...headers },
      };
    },
    async after() {},
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory({ fetchImpl }),
        new RestTransportFactory({ fetchImpl }),
        new GrpcTransportFactory(),
      ],
      preferredTransports: [binding],
      clientConfig: binding === 'GRPC' && Object.keys(headers).length > 0 ? { interceptors: [credentials] } : {},
    }),
  );
  return factory.createFromAgentCard(card);
}

/** A SendMessageRequest carrying one text part. */
export function textRequest(
  text: string,
  ids: { contextId?: string; taskId?: string } = {},
  configuration: Record<string, unknown> = {},
): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...ids },
    configuration,
  });
}

/** The text of a part list's text parts. */
export function partsText(parts: { content?: { $case: string; value: unknown } }[] | undefined): string {
  return (parts ?? []).map((p) => (p.content?.$case === 'text' ? String(p.content.value) : '')).join('');
}

/** The answer of a completed task: the text of its artifacts (its closing status carries no copy). */
export function answerText(task: Task): string {
  return task.artifacts.map((artifact) => partsText(artifact.parts)).join('');
}

/** `result` as a Task, failing the test when the server answered with a bare Message. */
export function asTask(result: unknown): Task {
  if (!result || typeof result !== 'object' || !('status' in result))
    throw new Error(`expected a Task, got ${JSON.stringify(result)}`);
  return result as Task;
}

/** Collects a stream into a list of `$case` names and payloads. */
export async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The state names of a stream, e.g. `task:SUBMITTED`, `status:WORKING`, `artifact`. */
export function describeStream(events: StreamResponse[]): string[] {
  return events.map((event) => {
    const payload = event.payload;
    switch (payload?.$case) {
      case 'task':
        return `task:${payload.value.status?.state}`;
      case 'statusUpdate':
        return `status:${payload.value.status?.state}`;
      case 'artifactUpdate':
        return 'artifact';
      case 'message':
        return 'message';
      default:
        return 'empty';
    }
  });
}

/** The first page (up to 100) of the caller's tasks in `status` (all of them with TASK_STATE_UNSPECIFIED). */
export async function listTasksIn(client: Client, status: TaskState): Promise<Task[]> {
  const page = await client.listTasks({
    tenant: '',
    contextId: '',
    status,
    pageToken: '',
    statusTimestampAfter: undefined,
    pageSize: 100,
  });
  return page.tasks;
}

/**
 * Polls ListTasks until a working task whose first message text satisfies `matches` shows up (another
 * caller's blocking SendMessage still running); `undefined` when none did within `ms`.
 */
export async function findWorkingTask(
  client: Client,
  matches: (firstMessage: string) => boolean,
  ms = 20_000,
): Promise<Task | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = (await listTasksIn(client, TaskState.TASK_STATE_WORKING)).find((t) =>
      matches(partsText(t.history[0]?.parts)),
    );
    if (found || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 10));
  }
}
