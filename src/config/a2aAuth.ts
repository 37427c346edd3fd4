import { z } from 'zod';
import { HttpUrl } from './fields';

/** Names a grant lets through: `all`, or a list of exact names. */
const Reach = z.union([z.literal('all'), z.array(z.string().min(1))]);

/**
 * What a caller may reach beyond the default grant; a field left out keeps
 * the default's (every specialist, every remote agent, the tool families
 * marked for peers). Names are checked against the node when it starts.
 */
const CallerGrant = z
  .object({
    specialists: Reach.optional(),
    remoteAgents: Reach.optional(),
    toolFamilies: Reach.optional(),
  })
  .strict();

/**
 * A client certificate by its subject (`CN=peer-a`, or several attributes
 * `CN=peer-a, O=Example`, each of which must match) or its SHA-256
 * fingerprint (hex, colons optional).
 */
const ClientCertificate = z.union([
  z
    .object({ subject: z.string().regex(/^\s*[A-Za-z.0-9]+=[^,]+(,\s*[A-Za-z.0-9]+=[^,]+)*\s*$/, 'e.g. CN=peer-a') })
    .strict(),
  z
    .object({
      fingerprint: z
        .string()
        .regex(/^([0-9a-fA-F]{2}:?){31}[0-9a-fA-F]{2}$/, 'a SHA-256 fingerprint: 64 hex digits, colons optional'),
    })
    .strict(),
]);

/** The signature algorithms a token may use: asymmetric only, so no key the node publishes can forge one. */
const TokenAlgorithm = z.enum([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
]);

/**
 * Inbound OAuth 2 / OpenID Connect (issue 26): JWT access tokens from one
 * issuer, checked against its JWKS. A token's subject or client id names a
 * caller (`callers[].oidcSubjects`); its scopes map to grants (`scopes`).
 */
const A2aOidc = z
  .object({
    issuer: HttpUrl(),
    /** The `aud` a token must carry (one of them, when a list). */
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
    /** The issuer's key set; found by discovery (`<issuer>/.well-known/openid-configuration`) when unset. */
    jwksUrl: HttpUrl().optional(),
    algorithms: z.array(TokenAlgorithm).min(1).default(['RS256', 'PS256', 'ES256', 'EdDSA']),
    clockToleranceSeconds: z.number().int().min(0).max(300, 'at most 300 (5m)').default(30),
    /** The issuer may be on loopback or a private network (a local identity provider); refused otherwise. */
    allowPrivateNetwork: z.boolean().default(false),
    /** How the card tells clients to get a token: OIDC discovery, or OAuth 2 client credentials at `tokenUrl`. */
    cardScheme: z.enum(['openIdConnect', 'oauth2']).default('openIdConnect'),
    tokenUrl: HttpUrl().optional(),
    /** Scope → what it grants (fields left out keep the default grant's); shown on the card. */
    scopes: z
      .record(z.string().min(1), z.object({ description: z.string().optional(), grant: CallerGrant }).strict())
      .default({}),
    /** A token whose subject names no caller: runs as `oidc:<subject>` with its scopes' grant, or is refused. */
    unknownSubjects: z.enum(['scopes', 'refuse']).default('scopes'),
  })
  .strict()
  .refine((oidc) => oidc.cardScheme !== 'oauth2' || oidc.tokenUrl, {
    message: 'cardScheme oauth2 needs tokenUrl (the card names where clients get tokens)',
    path: ['tokenUrl'],
  });

/**
 * One configured caller: its name (the principal id its rows are stored
 * under), its credentials (values may be `${ENV}` or `{{secret:NAME}}` from
 * the owner's vault), and either `owner: true` or a grant.
 */
const A2aCaller = z
  .object({
    name: z
      .string()
      .regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/, 'letters, digits, _ and -, starting with a letter')
      .refine((name) => name !== 'owner', '"owner" is reserved: set owner: true instead')
      .refine((name) => name !== 'anonymous', '"anonymous" is reserved: it names callers without a credential'),
    bearerTokens: z.array(z.string().min(1)).default([]),
    apiKeys: z.array(z.string().min(1)).default([]),
    /** Subjects (`sub`) or client ids (`client_id`, `azp`) of tokens from `a2a.auth.oidc` that are this caller. */
    oidcSubjects: z.array(z.string().min(1)).default([]),
    /** Client certificates (mutual TLS, `server.tls.clientCa`) that are this caller. */
    clientCertificates: z.array(ClientCertificate).default([]),
    owner: z.boolean().default(false),
    grant: CallerGrant.optional(),
  })
  .strict()
  .refine(
    (caller) =>
      caller.bearerTokens.length +
        caller.apiKeys.length +
        caller.oidcSubjects.length +
        caller.clientCertificates.length >
      0,
    { message: 'a caller needs at least one bearer token or API key, OIDC subject or client certificate' },
  )
  .refine((caller) => !(caller.owner && caller.grant), {
    message: 'an owner caller reaches everything: remove its grant or owner: true',
  });

/**
 * Delegated tokens inbound (issue 33): a token of `a2a.auth.oidc` whose `act` claim says another party acts for
 * its subject runs as the subject, narrowed to what each actor of the chain may do (the grant of the caller its
 * subject names in `callers[].oidcSubjects`, else the default grant). Every actor of the chain must be listed
 * here, and the chain may be at most `maxDepth` long; any other delegated token is refused (401).
 */
const A2aDelegation = z
  .object({
    /** The token subjects (client ids) that may act for others: the `sub` of an `act` claim. */
    actors: z.array(z.string().min(1)).min(1),
    /** The most actors one token's chain may name. */
    maxDepth: z.number().int().min(1).max(8).default(3),
  })
  .strict();

/** `a2a.auth`: who may call the node, by which credentials, and what each caller may reach. */
export const A2aAuth = z
  .object({
    /** Each token its own caller (`bearer:<hash>`) with the default grant. */
    bearerTokens: z.array(z.string().min(1)).default([]),
    /** Each key its own caller (`apikey:<hash>`) with the default grant. */
    apiKeys: z.array(z.string().min(1)).default([]),
    apiKeyHeader: z.string().default('X-API-Key'),
    /** JWT access tokens from an OAuth 2 / OpenID Connect issuer. */
    oidc: A2aOidc.optional(),
    /** Named callers with their own grants (or the owner's reach). */
    callers: z
      .array(A2aCaller)
      .default([])
      .refine((callers) => new Set(callers.map((c) => c.name)).size === callers.length, {
        message: 'caller names must be unique',
      }),
    /** Delegated tokens (an `act` claim, RFC 8693) of `oidc` accepted from these actors (issue 33). */
    delegation: A2aDelegation.optional(),
  })
  .strict()
  .refine((auth) => !auth.delegation || auth.oidc, {
    message: 'delegation needs oidc: delegated tokens come from that issuer',
    path: ['delegation'],
  });

/** One entry of `a2a.auth.callers`. */
export type A2aCaller = z.infer<typeof A2aCaller>;
/** `a2a.auth.oidc`: the issuer whose tokens the node accepts. */
export type A2aOidc = z.infer<typeof A2aOidc>;
/** `a2a.auth.delegation`: who may act for others. */
export type A2aDelegation = z.infer<typeof A2aDelegation>;
