import type { IncomingMessage } from 'node:http';
import express from 'express';
import {
  A2A_VERSION_HEADER,
  AgentCard,
  Extensions,
  HTTP_EXTENSION_HEADER,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
  taskStateFromJSON,
  type Message,
} from '@a2a-js/sdk';
import { A2A_LEGACY_PROTOCOL_VERSION } from '@a2a-js/sdk/compat/v0_3';
import { legacyRestRouter } from '@a2a-js/sdk/compat/v0_3/server/express';
import { PushNotificationNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import {
  defaultServerCallContextBuilder,
  validateVersion,
  type A2ARequestHandler,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import type { Logger } from '../../log/logger';
import { invalidParam } from '../../protocol/errorDetails';
import { userFor, userOf } from '../../identity/request';
import { jsonErrors } from './errors';
import { sendJson, principalOfRequest, type HttpCall } from './httpCall';
import type { Step } from './inbound';
import { nestingProblem } from './jsonDepth';
import { messageViolation, SendMessageParamsV1 } from './messageSchema';
import { restContentType, restErrorAnswer, sendRestRefusal } from './restResponses';
import { writeEventStream } from './eventStream';
import type { RouteSpec } from './routes';

/** Options of {@link restBinding}. */
export interface RestBindingOptions {
  requestHandler: A2ARequestHandler;
  /** `a2a.legacyCompat`: the v0.3 REST routes under `/v1` too (the SDK's `legacyRestRouter`). */
  legacyCompat: boolean;
  /** The chain's JSON reader, run for the methods that carry a body (v0.3's router reads its own). */
  body: Step<HttpCall>;
  logger: Logger;
}

/** A row of the route table with the steps that answer it after the shared ones and identity. */
export type RestRoute = RouteSpec & { readonly steps: readonly Step<HttpCall>[] };

/** One v1.0 HTTP+JSON method: its row (without the tenant) and how it is answered. */
interface RestMethod {
  readonly name: string;
  readonly methods: readonly string[];
  readonly path: string;
  readonly readsBody?: boolean;
  answer(call: HttpCall, context: ServerCallContext, tenant: string): Promise<Answer>;
}

/** A JSON answer (`body` undefined: 204), or a stream of events. */
type Answer = { status: number; body?: unknown } | { events: AsyncGenerator<StreamResponse> };

const VERSION_HEADER = A2A_VERSION_HEADER.toLowerCase();
const EXTENSION_HEADER = HTTP_EXTENSION_HEADER.toLowerCase();

/**
 * The HTTP+JSON binding (§11), owned by the node: the route table's rows
 * for v1.0 (each with and without a `{tenant}` segment) answered over the
 * node's one request handler with the SDK's public ProtoJSON types
 * (`SendMessageRequest.fromJSON`, `Task.toJSON`, …) and error bodies
 * (`toRestErrorBody`, `restStatusFor`, through `restResponses.ts`). The SDK
 * has no public seam for its v1.0 REST transport but its express router, whose
 * answers would have to be patched, so the node owns this piece outright. v0.3
 * (`legacyCompat`, under `/v1`, chosen by `A2A-Version` absent or 0.x) is
 * the SDK's public `legacyRestRouter`, rendering under the table's rows and
 * reading its own body.
 * @example
 * const rows = restBinding({ requestHandler, legacyCompat: true, logger });
 * const table = new RouteTable([...jsonRpcRows, ...rows.map(toRoute)]);
 */
export function restBinding(options: RestBindingOptions): RestRoute[] {
  const { requestHandler, logger } = options;
  const legacy = options.legacyCompat ? legacyApp(requestHandler, logger) : undefined;
  const rows: RestRoute[] = [];
  for (const method of restMethods(requestHandler)) {
    const answer = answerStep(method, requestHandler, logger);
    const sends = method.name === 'SendMessage' || method.name === 'SendStreamingMessage';
    const steps = [...(method.readsBody ? [options.body] : []), ...(sends ? [checkMessage] : []), answer];
    const row = { name: method.name, methods: method.methods, binding: 'rest' as const, access: 'caller' as const };
    rows.push({ ...row, path: method.path, steps });
    // `/v1/…` reads as the tenant `v1` in v1.0, and is v0.3's prefix: the version a request asks for decides.
    const tenantSteps = legacy ? [legacySwitch(legacy), ...steps] : steps;
    rows.push({ ...row, path: `/{tenant}${method.path}`, steps: tenantSteps });
  }
  if (legacy) {
    const card = { name: 'GetExtendedAgentCard', binding: 'rest' as const, access: 'caller' as const };
    rows.push({ ...card, methods: ['GET'], path: '/v1/card', steps: [legacyOnly(legacy)] });
  }
  return rows;
}

/** Whether a request asks for v0.3 (no `A2A-Version`, or a 0.x one), as the SDK's express handlers judge it. */
function asksLegacy(call: HttpCall): boolean {
  const version = call.header(VERSION_HEADER) ?? A2A_LEGACY_PROTOCOL_VERSION;
  return version.trim().startsWith('0.');
}

/** The v0.3 REST router (the SDK's, public) as one express app, its caller the chain's principal. */
function legacyApp(requestHandler: A2ARequestHandler, logger: Logger): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const userBuilder = async (req: IncomingMessage) => userOf(principalOfRequest(req));
  app.use(legacyRestRouter({ requestHandler, userBuilder }));
  app.use(jsonErrors(logger));
  return app;
}

/** Before a `/{tenant}/…` row's own steps: a `/v1/…` request asking for v0.3 goes to the v0.3 router. */
function legacySwitch(app: express.Express): Step<HttpCall> {
  return (call, next) => {
    if (call.params.tenant !== 'v1' || !asksLegacy(call)) return next();
    app(call.req, call.res);
  };
}

/** A v0.3-only row: the v0.3 router, or 404 for a request asking for another version. */
function legacyOnly(app: express.Express): Step<HttpCall> {
  return (call) => {
    if (asksLegacy(call)) app(call.req, call.res);
    else sendJson(call.res, 404, { error: { code: 404, message: `no route for ${call.method} ${call.path}` } });
  };
}

/** The message check of a send, on its raw shape (before `fromJSON` coerces it): the field named, §11.6. */
const checkMessage: Step<HttpCall> = (call, next) => {
  const body = call.body;
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  const problem = !isObject
    ? 'the request body must be a JSON object with a message'
    : nestingProblem(body, 'the request body');
  if (problem) throw new RequestMalformedError(problem);
  const violation = call.header(VERSION_HEADER) === '1.0' ? messageViolation(SendMessageParamsV1, body) : undefined;
  if (violation) throw invalidParam(violation.field, violation.description);
  return next();
};

/** The last step of a method's row: the call context as the spec builds it, the method, the answer written. */
function answerStep(method: RestMethod, requestHandler: A2ARequestHandler, logger: Logger): Step<HttpCall> {
  return async (call) => {
    const tenant = call.params.tenant ?? '';
    const context = defaultServerCallContextBuilder({
      extensions: Extensions.parseServiceParameter(call.header(EXTENSION_HEADER)),
      user: userFor(call.principal, call.subjectToken),
      headers: call.headers,
      requestedVersion: call.header(VERSION_HEADER),
      tenant: tenant || undefined,
    });
    validateVersion(context.requestedVersion, await requestHandler.getAgentCard(), 'HTTP+JSON');
    const answer = await method.answer(call, context, tenant);
    if (context.activatedExtensions) call.res.setHeader(HTTP_EXTENSION_HEADER, [...context.activatedExtensions]);
    if ('events' in answer) {
      await writeEventStream(
        call.res,
        { events: answer.events, frame: restFrame },
        {
          id: null,
          logger,
          answerError: (err) => sendRestRefusal(call, err, logger),
          errorFrame: (err) => restErrorFrame(call, err, logger),
        },
      );
    } else if (answer.body === undefined) call.res.writeHead(answer.status).end();
    else sendJson(call.res, answer.status, answer.body, { 'Content-Type': restContentType(call) });
  };
}

const restFrame = (event: StreamResponse) => `data: ${JSON.stringify(StreamResponse.toJSON(event))}\n\n`;

/** An `event: error` frame carrying the error body the same failure would get before the stream opened. */
function restErrorFrame(call: HttpCall, err: unknown, logger: Logger): string {
  return `event: error\ndata: ${JSON.stringify(restErrorAnswer(err, logger, call).body)}\n\n`;
}

/** The v1.0 methods (§11.3), rows in the order the SDK's router tries them: a suffixed path before the plain one. */
function restMethods(handler: A2ARequestHandler): RestMethod[] {
  const requirePush = async () => {
    if (!(await handler.getAgentCard()).capabilities?.pushNotifications) throw new PushNotificationNotSupportedError();
  };
  const taskId = (call: HttpCall) => call.params.id!;
  const ok = (body: unknown) => ({ status: 200, body });
  return [
    {
      name: 'GetExtendedAgentCard',
      methods: ['GET'],
      path: '/extendedAgentCard',
      answer: async (_call, context, tenant) =>
        ok(AgentCard.toJSON(await handler.getAuthenticatedExtendedAgentCard({ tenant }, context))),
    },
    {
      name: 'SendMessage',
      methods: ['POST'],
      path: '/message:send',
      readsBody: true,
      answer: async (call, context, tenant) => {
        const result = await handler.sendMessage(sendParams(call, tenant), context);
        return ok(SendMessageResponse.toJSON({ payload: sendPayload(result) }));
      },
    },
    {
      name: 'SendStreamingMessage',
      methods: ['POST'],
      path: '/message:stream',
      readsBody: true,
      answer: async (call, context, tenant) => ({
        events: handler.sendMessageStream(sendParams(call, tenant), context),
      }),
    },
    {
      name: 'SubscribeToTask',
      methods: ['GET', 'POST'],
      path: '/tasks/{id}:subscribe',
      answer: async (call, context, tenant) => ({ events: handler.resubscribe({ id: taskId(call), tenant }, context) }),
    },
    {
      name: 'CancelTask',
      methods: ['POST'],
      path: '/tasks/{id}:cancel',
      readsBody: true,
      answer: async (call, context, tenant) =>
        ok(Task.toJSON(await handler.cancelTask({ id: taskId(call), tenant, metadata: {} }, context))),
    },
    {
      name: 'GetTask',
      methods: ['GET'],
      path: '/tasks/{id}',
      answer: async (call, context, tenant) => {
        const historyLength = optionalCount(call.query().get('historyLength'), 'historyLength');
        const params = { id: taskId(call), tenant, ...(historyLength === undefined ? {} : { historyLength }) };
        return ok(Task.toJSON(await handler.getTask(params, context)));
      },
    },
    {
      name: 'ListTasks',
      methods: ['GET'],
      path: '/tasks',
      answer: async (call, context, tenant) => {
        const query = call.query();
        const includeArtifacts = query.get('includeArtifacts') === 'true';
        const result = await handler.listTasks(listParams(query, tenant, includeArtifacts), context);
        return ok(listTasksJson(result, includeArtifacts));
      },
    },
    {
      name: 'CreateTaskPushNotificationConfig',
      methods: ['POST'],
      path: '/tasks/{id}/pushNotificationConfigs',
      readsBody: true,
      answer: async (call, context, tenant) => {
        await requirePush();
        const body = isObject(call.body) ? call.body : {};
        const config = TaskPushNotificationConfig.fromJSON({ ...body, taskId: taskId(call), tenant });
        const created = await handler.createTaskPushNotificationConfig(config, context);
        return { status: 201, body: TaskPushNotificationConfig.toJSON(created) };
      },
    },
    {
      name: 'ListTaskPushNotificationConfigs',
      methods: ['GET'],
      path: '/tasks/{id}/pushNotificationConfigs',
      answer: async (call, context, tenant) => {
        await requirePush();
        const params = { taskId: taskId(call), pageSize: 0, pageToken: '', tenant };
        const list = await handler.listTaskPushNotificationConfigs(params, context);
        return ok(ListTaskPushNotificationConfigsResponse.toJSON(list));
      },
    },
    {
      name: 'GetTaskPushNotificationConfig',
      methods: ['GET'],
      path: '/tasks/{id}/pushNotificationConfigs/{configId}',
      answer: async (call, context, tenant) => {
        await requirePush();
        const params = { taskId: taskId(call), id: call.params.configId!, tenant };
        return ok(TaskPushNotificationConfig.toJSON(await handler.getTaskPushNotificationConfig(params, context)));
      },
    },
    {
      name: 'DeleteTaskPushNotificationConfig',
      methods: ['DELETE'],
      path: '/tasks/{id}/pushNotificationConfigs/{configId}',
      answer: async (call, context, tenant) => {
        await requirePush();
        await handler.deleteTaskPushNotificationConfig(
          { taskId: taskId(call), id: call.params.configId!, tenant },
          context,
        );
        return { status: 204 };
      },
    },
  ];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A send's params: the body as ProtoJSON, the path's tenant (which wins over the body's). */
function sendParams(call: HttpCall, tenant: string) {
  const body = isObject(call.body) ? call.body : {};
  const params = SendMessageRequest.fromJSON(tenant ? { ...body, tenant } : body);
  if (!params.message) throw new RequestMalformedError('message is required');
  if (!params.message.messageId) throw new RequestMalformedError('message.messageId is required');
  return params;
}

/** A send's result as the response's payload: a message (it has a `messageId`) or a task. */
function sendPayload(result: Task | Message): SendMessageResponse['payload'] {
  return 'messageId' in result ? { $case: 'message', value: result } : { $case: 'task', value: result as Task };
}

/** ListTasks' query as its request (§11.3.6). */
function listParams(query: URLSearchParams, tenant: string, includeArtifacts: boolean) {
  const status = query.get('status');
  const pageSize = query.get('pageSize');
  return {
    tenant,
    contextId: query.get('contextId') ?? '',
    status: status ? taskStateFromJSON(Number.isNaN(Number(status)) ? status : Number(status)) : 0,
    pageSize: pageSize ? pageSizeOf(pageSize) : undefined,
    pageToken: query.get('pageToken') ?? '',
    historyLength: optionalCount(query.get('historyLength'), 'historyLength'),
    statusTimestampAfter: query.get('statusTimestampAfter') || undefined,
    includeArtifacts,
  };
}

/** A list answer as ProtoJSON with its scalar fields always present; tasks given artifacts when asked for. */
function listTasksJson(result: ListTasksResponse, includeArtifacts: boolean) {
  const {
    tasks = [],
    nextPageToken,
    pageSize,
    totalSize,
    ...rest
  } = ListTasksResponse.toJSON(result) as {
    tasks?: Record<string, unknown>[];
    nextPageToken?: string;
    pageSize?: number;
    totalSize?: number;
  };
  return {
    tasks: includeArtifacts ? tasks.map((task) => ({ artifacts: [], ...task })) : tasks,
    nextPageToken: nextPageToken ?? '',
    pageSize: pageSize ?? 0,
    totalSize: totalSize ?? 0,
    ...rest,
  };
}

/** A non-negative integer of the query, or undefined when absent. */
function optionalCount(value: string | null, name: string): number | undefined {
  if (value === null || value === '') return undefined;
  const parsed = Number.parseInt(value, 10);
  if (Number.isNaN(parsed)) throw new RequestMalformedError(`${name} must be a valid integer`);
  if (parsed < 0) throw new RequestMalformedError(`${name} must be non-negative`);
  return parsed;
}

function pageSizeOf(value: string): number {
  const parsed = Number.parseInt(value, 10);
  if (Number.isNaN(parsed) || String(parsed) !== value.trim())
    throw new RequestMalformedError('pageSize must be a valid integer');
  if (parsed < 1 || parsed > 100) throw new RequestMalformedError('pageSize must be between 1 and 100');
  return parsed;
}
