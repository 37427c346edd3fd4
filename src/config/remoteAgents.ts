import { z } from 'zod';
import { atMost, HttpUrl } from './fields';

const RemoteAgentAuth = z.discriminatedUnion('type', [
  z.object({ type: z.literal('bearer'), token: z.string().min(1) }).strict(),
  z
    .object({ type: z.literal('apiKey'), header: z.string().min(1).default('X-API-Key'), key: z.string().min(1) })
    .strict(),
  /** OAuth 2 client credentials (RFC 6749 §4.4): a token fetched from `tokenUrl` on first use, refreshed before it expires. */
  z
    .object({
      type: z.literal('oauth2'),
      tokenUrl: HttpUrl(),
      clientId: z.string().min(1),
      clientSecret: z.string().min(1),
      scopes: z.array(z.string().min(1)).default([]),
      /** Sent as `resource` (RFC 8707) and `audience`: the API the token is for. */
      audience: z.string().min(1).optional(),
      /** How the client authenticates to the token endpoint. */
      clientAuth: z.enum(['basic', 'post']).default('basic'),
    })
    .strict(),
  /**
   * On-behalf-of delegation (OAuth 2.0 Token Exchange, RFC 8693, issue 33): each call made for a caller that
   * presented a token of `a2a.auth.oidc` carries that token exchanged at `tokenUrl` for one whose audience is the
   * remote (the caller its subject, this node its actor). A caller with nothing to exchange (a static credential,
   * the local owner): `required` refuses the call, `preferred` sends the node's own client-credentials token.
   */
  z
    .object({
      type: z.literal('tokenExchange'),
      tokenUrl: HttpUrl(),
      clientId: z.string().min(1),
      clientSecret: z.string().min(1),
      /** The remote's audience (`audience`, and `resource` when it is a URI). */
      audience: z.string().min(1),
      scopes: z.array(z.string().min(1)).default([]),
      onBehalfOf: z.enum(['required', 'preferred']).default('required'),
      clientAuth: z.enum(['basic', 'post']).default('basic'),
      /** Also sends the node's own client-credentials token as the exchange's `actor_token`. */
      actorToken: z.boolean().default(false),
    })
    .strict(),
]);

/** A client certificate for a remote agent that asks for one, and the CA its server certificate is checked against. */
const RemoteAgentTls = z
  .object({
    /** PEM, a PEM file path, or `{{secret:NAME}}`. */
    cert: z.string().min(1).optional(),
    key: z.string().min(1).optional(),
    ca: z.string().min(1).optional(),
  })
  .strict()
  .refine((tls) => Boolean(tls.cert) === Boolean(tls.key), { message: 'cert and key go together' });

/** One entry of `a2a.remoteAgents`: a peer the node delegates to, where its card is, and how to reach it. */
export const RemoteAgentEntry = z
  .object({
    name: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/, 'letters, digits, _ and -, starting with a letter'),
    agentCardUrl: HttpUrl().optional(),
    baseUrl: HttpUrl().optional(),
    cardFile: z.string().optional(),
    description: z.string().max(1000).optional(),
    timeoutMs: z.number().int().positive().max(120_000, atMost(120_000)).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    auth: RemoteAgentAuth.optional(),
    tls: RemoteAgentTls.optional(),
    enabled: z.boolean().default(true),
    /** Allow interface URLs on another origin than the card's. */
    allowCrossOrigin: z.boolean().default(false),
    /**
     * Which binding calls the peer: `auto`, the card's first the node speaks over HTTP (JSON-RPC, HTTP+JSON), or its
     * gRPC interface when it offers only that; `grpc`, its gRPC interface.
     */
    transport: z.enum(['auto', 'grpc']).default('auto'),
    /** The entry's host name may resolve to loopback, private or link-local addresses (a peer on the LAN by name). */
    allowPrivateNetwork: z.boolean().default(false),
    /** Pinned verification key for signed cards: JWKS URL/JSON or PEM. */
    publicKey: z.string().optional(),
  })
  .strict()
  .refine((e) => [e.agentCardUrl, e.baseUrl, e.cardFile].filter(Boolean).length === 1, {
    message: 'exactly one of agentCardUrl, baseUrl or cardFile is required',
  });

export type RemoteAgentEntry = z.infer<typeof RemoteAgentEntry>;
