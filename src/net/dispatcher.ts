import { Agent, buildConnector, fetch as undiciFetch, type Dispatcher } from 'undici';
import { formatIp } from './address';
import { capBody } from './body';
import { OutboundRefusedError, type OutboundPolicy } from './policy';

/**
 * Connections pinned to checked addresses. The undici agent built here
 * resolves every new connection's host through the policy and connects to
 * exactly the addresses the policy approved (in the resolver's order, the
 * next on a connection error), so a name cannot resolve to one address for
 * the check and another for the connection. Redirects are new requests,
 * and a new origin is a new connection: each one is checked the same way.
 */

/** Options of {@link createPinnedAgent}. */
export interface PinnedAgentOptions {
  policy: OutboundPolicy;
  /** Per-address connect deadline. */
  connectTimeoutMs?: number;
  /** Other undici agent settings (keep-alive, pipelining…). */
  agent?: Omit<Agent.Options, 'connect'>;
}

/**
 * An undici `Agent` whose every connection is checked and pinned by `policy`.
 * @example
 * const dispatcher = createPinnedAgent({ policy });
 * await request('http://peer.example/.well-known/agent-card.json', { dispatcher });
 */
export function createPinnedAgent(options: PinnedAgentOptions): Agent {
  const direct = buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 });
  const connect: buildConnector.connector = (target, callback) => {
    options.policy.resolve(target.hostname).then(
      (decision) => {
        if (!decision.ok) {
          callback(new OutboundRefusedError(`refused by the outbound address policy: ${decision.reason}`), null);
          return;
        }
        const attempt = (index: number, lastError?: Error): void => {
          const address = decision.addresses[index];
          if (!address) {
            callback(lastError ?? new OutboundRefusedError(`${target.hostname} has no usable address`), null);
            return;
          }
          // `host` (with the name) stays as it was, so TLS still checks the certificate for the name.
          direct({ ...target, hostname: formatIp(address) }, (error, socket) => {
            if (error) attempt(index + 1, error);
            else callback(null, socket);
          });
        };
        attempt(0);
      },
      (error: Error) => callback(error, null),
    );
  };
  return new Agent({ ...options.agent, connect });
}

/** Options of {@link createOutboundFetch}. */
export interface OutboundFetchOptions {
  dispatcher: Dispatcher;
  /** Largest response body read; past it the body errors (a peer or endpoint cannot make us buffer without end). */
  maxResponseBytes?: number;
}

/**
 * A `fetch` for endpoints that need no redirect (model and embeddings
 * APIs, webhooks): connections through a pinned dispatcher, a redirect
 * answered with an {@link OutboundRefusedError} instead of followed, the
 * body optionally capped.
 * @example
 * const fetch = createOutboundFetch({ dispatcher: createPinnedAgent({ policy }) });
 * new OpenAI({ apiKey, baseURL, fetch });
 */
export function createOutboundFetch(options: OutboundFetchOptions): typeof fetch {
  const outbound = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let response;
    try {
      response = await undiciFetch(input as string, {
        ...(init as object),
        ...(typeof init?.body === 'string' ? sentOnce(init.body, init.headers) : {}),
        // Not 'manual': with any mode but 'error' undici sends a copy of the request (its body teed),
        // which holds the body's bytes in the unread branch for as long as the answer streams.
        redirect: 'error',
        dispatcher: options.dispatcher,
      });
    } catch (err) {
      if ((err as { cause?: { message?: unknown } }).cause?.message === 'unexpected redirect')
        throw new OutboundRefusedError(
          `${originOf(input)} answered with a redirect, refused: this endpoint needs none`,
        );
      throw err;
    }
    if (options.maxResponseBytes === undefined || !response.body) return response as unknown as Response;
    return new Response(capBody(response.body, options.maxResponseBytes), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers as unknown as Headers,
    });
  };
  return outbound as typeof fetch;
}

/** The origin a request went to, for a refusal (no path or query: they may carry keys). */
function originOf(input: string | URL | Request): string {
  try {
    return new URL(typeof input === 'string' || input instanceof URL ? input : input.url).origin;
  } catch {
    return 'the endpoint';
  }
}

/**
 * A text body as a stream of its bytes read once, its length declared (so it
 * still goes out with `Content-Length`, not chunked). undici's fetch keeps a
 * text body, to send again after a redirect, until the response is read to
 * its end: for a streamed model answer that is the whole answer, a prompt of
 * ~15 KB held per open stream. A stream body is let go once sent, and nothing
 * here sends a body twice (redirects are errors, a retry calls fetch again).
 */
function sentOnce(
  text: string,
  headers: RequestInit['headers'],
): { body: ReadableStream; headers: Record<string, string>; duplex: 'half' } {
  const bytes = Buffer.from(text, 'utf8');
  const sent: Record<string, string> = Object.fromEntries(new Headers(headers));
  sent['content-length'] = String(bytes.length);
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
  return { body, headers: sent, duplex: 'half' };
}
