import { A2AError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { StoreHealth } from '../../store';

/**
 * The answer to a request the node could not serve because its database
 * does not answer: a temporary system error, which the A2A specification
 * (§3.3.2) gives JSON-RPC `-32603` and HTTP 503 (`restResponses.ts` maps its
 * reason), saying what the caller can do instead of the driver's text
 * (which names the database's address).
 */
export class StorageUnavailableError extends A2AError {
  override readonly reason = STORAGE_UNAVAILABLE;
  constructor(cause?: unknown) {
    super({
      message: "the node's database does not answer now; try again shortly (another replica may serve it)",
      cause,
    });
  }
}

/** The `google.rpc.ErrorInfo` reason of {@link StorageUnavailableError}. */
export const STORAGE_UNAVAILABLE = 'STORAGE_UNAVAILABLE';

/** The methods that read or write the task store, each answered by {@link answerStorageOutages}. */
const PROMISED = [
  'sendMessage',
  'getTask',
  'cancelTask',
  'listTasks',
  'createTaskPushNotificationConfig',
  'getTaskPushNotificationConfig',
  'listTaskPushNotificationConfigs',
  'deleteTaskPushNotificationConfig',
] as const satisfies readonly (keyof A2ARequestHandler)[];
const STREAMED = ['sendMessageStream', 'resubscribe'] as const satisfies readonly (keyof A2ARequestHandler)[];

/**
 * The node's request handler, answering {@link StorageUnavailableError}
 * when a request fails while the database does not answer (asked once it
 * failed: nothing is added to a request that succeeds). A2A errors pass
 * as they are (they are answers), as does every failure while the
 * database answers. A stream's failure is translated on its first read,
 * where a turn that cannot be stored fails; later reads go straight to it.
 * @example
 * const requestHandler = answerStorageOutages(taskHandler, () => storage.health());
 */
export function answerStorageOutages(
  handler: A2ARequestHandler,
  health: () => Promise<StoreHealth>,
): A2ARequestHandler {
  const translate = async (err: unknown): Promise<never> => {
    if (err instanceof A2AError) throw err;
    const now = await health();
    throw now.ok ? err : new StorageUnavailableError(err);
  };
  const answering = {
    getAgentCard: () => handler.getAgentCard(),
    getAuthenticatedExtendedAgentCard: (params, context) => handler.getAuthenticatedExtendedAgentCard(params, context),
  } as A2ARequestHandler;
  for (const method of PROMISED) {
    const call = handler[method].bind(handler) as (...args: unknown[]) => Promise<unknown>;
    (answering as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => call(...args).catch(translate);
  }
  for (const method of STREAMED) {
    const open = handler[method].bind(handler) as (...args: unknown[]) => AsyncGenerator<unknown, void, undefined>;
    (answering as unknown as Record<string, unknown>)[method] = (...args: unknown[]) =>
      translatingFirstRead(open(...args), translate);
  }
  return answering;
}

/** `stream`, its first read's failure replaced by what `translate` throws. */
function translatingFirstRead<T>(
  stream: AsyncGenerator<T, void, undefined>,
  translate: (err: unknown) => Promise<never>,
): AsyncGenerator<T, void, undefined> {
  let first = true;
  const translating: AsyncGenerator<T, void, undefined> = {
    next: (...args) => {
      if (!first) return stream.next(...args);
      first = false;
      return stream.next(...args).catch(translate);
    },
    return: (value) => stream.return(value),
    throw: (err) => stream.throw(err),
    [Symbol.asyncIterator]: () => translating,
    [Symbol.asyncDispose]: () => stream.return(undefined).then(() => undefined),
  };
  return translating;
}
