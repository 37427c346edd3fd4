import { createOutboundFetch, createPinnedAgent } from './dispatcher';
import { parseHost } from './host';
import { formatIp } from './address';
import { createOutboundPolicy, type Lookup } from './policy';

/**
 * The `fetch` for an endpoint the operator configured (the model's
 * `agent.baseUrl`, `embedding.baseUrl`): its own host is opened — a local
 * model server on `127.0.0.1` or a LAN name is what the operator chose —
 * and nothing else is; the connection is pinned to the addresses checked,
 * and redirects are refused (these APIs need none, and a redirect would
 * carry the API key's request elsewhere). No peer or caller can change
 * the URL, so this is the policy's narrowest opening.
 */

/** Options of {@link createEndpointFetch}. */
export interface EndpointFetchOptions {
  /** The configured base URL; the provider's public default when absent (nothing opened then). */
  baseUrl?: string;
  /** The configuration key naming the endpoint, for refusals. */
  setting: string;
  lookup?: Lookup;
  maxResponseBytes?: number;
}

/**
 * @example
 * const fetch = createEndpointFetch({ baseUrl: config.embedding.baseUrl, setting: 'embedding.baseUrl' });
 * new OpenAI({ apiKey, baseURL: config.embedding.baseUrl, fetch });
 */
export function createEndpointFetch(options: EndpointFetchOptions): typeof fetch {
  const host = options.baseUrl ? configuredHost(options.baseUrl) : undefined;
  const policy = createOutboundPolicy({
    setting: options.setting,
    allowHosts: (candidate) => candidate === host,
    lookup: options.lookup,
  });
  return createOutboundFetch({
    dispatcher: createPinnedAgent({ policy }),
    maxResponseBytes: options.maxResponseBytes,
  });
}

function configuredHost(url: string): string | undefined {
  try {
    const parsed = parseHost(new URL(url).hostname);
    if (parsed.kind === 'ip') return formatIp(parsed.ip);
    if (parsed.kind === 'name') return parsed.name;
  } catch {
    // the schema has checked it is a URL
  }
  return undefined;
}
