import type { Binding } from './inbound';

/**
 * What each HTTP request is, decided once from its method and path: its
 * binding (how a refusal is written, which steps it takes) and its name, the
 * A2A method or a coarse name of the node's other routes — a bounded set for
 * metric labels and span names, never a raw path.
 */

/** JSON-RPC method names kept as they are; any other method of a parsed request is `unknown`. */
const JSON_RPC_METHODS: ReadonlySet<string> = new Set([
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'SetTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/list',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
  'agent/getAuthenticatedExtendedCard',
]);

/**
 * The HTTP+JSON routes the SDK's REST handler serves: v1.0 with an optional tenant segment, v0.3 under `/v1`
 * (which reads as a tenant) plus its `/v1/card`. Anything else is the node's own (card, discovery, health, pages).
 */
const REST_ROUTE =
  /^(?:\/[^/]+)?\/(?:extendedAgentCard|message:(?:send|stream)|tasks(?:\/[^/]+(?:\/pushNotificationConfigs(?:\/[^/]+)?)?)?)$|^\/v1\/card$/;

/** How a push config's latest notification went (`pushDeliveries.ts`): the node's own route, behind credentials. */
const PUSH_DELIVERY_ROUTE = /^(?:\/[^/]+)?\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+\/delivery$/;

/** The node's own routes that read the caller's data: they take the credential step before express. */
export const CREDENTIAL_PAGES: ReadonlySet<string> = new Set(['agents', 'PushDelivery']);

/** The HTTP+JSON routes, by pattern, as A2A method names. */
const REST_METHODS: Array<[string, RegExp, string]> = [
  ['POST', /\/message:send$/, 'SendMessage'],
  ['POST', /\/message:stream$/, 'SendStreamingMessage'],
  ['POST', /\/tasks\/[^/]+:cancel$/, 'CancelTask'],
  ['GET', /\/tasks\/[^/]+:subscribe$/, 'SubscribeToTask'],
  ['POST', /\/tasks\/[^/]+:subscribe$/, 'SubscribeToTask'],
  ['GET', /\/tasks\/[^/]+\/pushNotificationConfigs(\/[^/]+)?$/, 'GetTaskPushNotificationConfig'],
  ['POST', /\/tasks\/[^/]+\/pushNotificationConfigs$/, 'SetTaskPushNotificationConfig'],
  ['DELETE', /\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+$/, 'DeleteTaskPushNotificationConfig'],
  ['GET', /\/tasks\/[^/:]+$/, 'GetTask'],
  ['GET', /\/tasks$/, 'ListTasks'],
  ['GET', /\/extendedAgentCard$|\/card$/, 'GetExtendedAgentCard'],
];

/** The card's paths: v1.0 and the v0.3 one older peers ask for. */
export const CARD_PATHS: ReadonlySet<string> = new Set(['/.well-known/agent-card.json', '/.well-known/agent.json']);

/** The node's own route prefixes named as they are. */
const PAGE_NAMES: ReadonlySet<string> = new Set(['agents', 'healthz', 'readyz', 'metrics', 'console']);

/** A request's binding and name, before its body is read. */
export interface CallKind {
  binding: Binding;
  name: string;
}

const JSON_RPC: CallKind = Object.freeze({ binding: 'jsonrpc', name: 'other' });

/**
 * The binding and name of a request to `path` (no query). JSON-RPC is `POST /`; its name is known once its body
 * is parsed ({@link jsonRpcName}).
 */
export function callKind(method: string, path: string): CallKind {
  if (path === '/' && method === 'POST') return JSON_RPC;
  if (REST_ROUTE.test(path)) {
    for (const [verb, pattern, name] of REST_METHODS)
      if (method === verb && pattern.test(path)) return { binding: 'rest', name };
    return { binding: 'rest', name: 'other' };
  }
  if (CARD_PATHS.has(path)) return { binding: 'http', name: 'AgentCard' };
  if (method === 'GET' && PUSH_DELIVERY_ROUTE.test(path)) return { binding: 'http', name: 'PushDelivery' };
  const first = path.split('/')[1] ?? '';
  return { binding: 'http', name: PAGE_NAMES.has(first) ? first : 'other' };
}

/** The name of a parsed JSON-RPC body: its method when it is one of A2A's, `unknown` for any other. */
export function jsonRpcName(body: unknown): string {
  if (typeof body !== 'object' || body === null) return 'other';
  const method = (body as { method?: unknown }).method;
  return typeof method === 'string' && JSON_RPC_METHODS.has(method) ? method : 'unknown';
}
