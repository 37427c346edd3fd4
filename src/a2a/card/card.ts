import { A2A_PROTOCOL_VERSION } from '@a2a-js/sdk';
import type { AgentCard, AgentInterface, AgentSkill, SecurityRequirement, SecurityScheme } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import { walkAgents, type Agent, type LlmAgent } from '../../agent/agent';
import type { LangoConfig } from '../../config/schema';
import { parseDuration } from '../../duration';
import { ENDED_TASK_EVENTS_KEPT_MS } from '../../store/taskEvents';
import { generationExtension } from '../../protocol/generationExtension';
import { skillExtension } from '../../protocol/skillExtension';
import { accountingExtension } from '../../protocol/accounting';
import { authConfigured, credentialKinds } from '../../identity/identity';

/**
 * The node's agent card, built from the agent tree: one skill for the
 * orchestrator (tag `orchestration`) and one per sub-agent, remote ones
 * included (tag `sub_agent:<root>`), each described by its capability
 * summary — never its instruction, prompt or tool names. The extended card
 * (authenticated callers only) adds tool counts and remote card URLs.
 */

/** What the card needs besides the tree. */
export interface CardInputs {
  config: LangoConfig;
  root: LlmAgent;
  /** Public URL of this node (no trailing slash). */
  baseUrl: string;
  /** The node's software version. */
  version: string;
  /** Where the gRPC binding listens (`host:port`, a gRPC target), when it is on (`server.grpcPort`). */
  grpcAddress?: string;
}

/** Security schemes declared when `a2a.auth` is set; names are what callers see. */
export const BEARER_SCHEME = 'bearer';
export const API_KEY_SCHEME = 'apiKey';
/** `a2a.auth.oidc`: OpenID Connect discovery, or OAuth 2 client credentials (`cardScheme`). */
export const OIDC_SCHEME = 'oidc';
export const OAUTH2_SCHEME = 'oauth2';
/** `server.tls.clientCa`: a client certificate. */
export const MTLS_SCHEME = 'mtls';

/** The public URL of the node: `a2a.baseUrl`, else `http(s)://<host>:<port>` (a wildcard bind is shown as loopback). */
export function publicBaseUrl(config: LangoConfig, port = config.server.port): string {
  if (config.a2a.baseUrl) return config.a2a.baseUrl.replace(/\/+$/, '');
  const host = ['0.0.0.0', '::', ''].includes(config.server.host) ? '127.0.0.1' : config.server.host;
  return `${config.server.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Builds the public card (in the SDK's in-memory form; serve it with
 * `AgentCard.toJSON`).
 * @example
 * const card = buildAgentCard({ config, root: root(), baseUrl: 'http://127.0.0.1:4000', version: '0.1.0' });
 */
export function buildAgentCard(inputs: CardInputs): AgentCard {
  const { config, root, baseUrl } = inputs;
  const { securitySchemes, securityRequirements } = security(config);
  return {
    name: config.a2a.agentName ?? root.name,
    description: config.a2a.agentDescription ?? root.description,
    supportedInterfaces: supportedInterfaces(config, baseUrl, inputs.grpcAddress),
    provider: { organization: 'lango', url: baseUrl },
    version: inputs.version,
    documentationUrl: undefined,
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extensions: [
        generationExtension({
          eventsKeptAfterEndMs: ENDED_TASK_EVENTS_KEPT_MS,
          idempotencyWindowMs: parseDuration(config.a2a.idempotencyWindow, 'a2a.idempotencyWindow'),
          longPollTimeoutMs: parseDuration(config.a2a.longPollTimeout, 'a2a.longPollTimeout'),
        }),
        skillExtension(),
        ...(config.observability.accounting ? [accountingExtension()] : []),
      ],
      extendedAgentCard: authConfigured(config),
    },
    securitySchemes,
    securityRequirements,
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain'],
    skills: skills(root, false),
    signatures: [],
    iconUrl: undefined,
  };
}

/**
 * Each binding the node serves (§8.3, in the order a client should prefer:
 * JSON-RPC, HTTP+JSON, gRPC), at v1.0 without a tenant (and at v0.3 for the
 * JSON bindings with `legacyCompat`), then the same v1.0 bindings once per
 * tenant of `a2a.tenants`, each naming its tenant (v0.3 has no tenants).
 */
function supportedInterfaces(config: LangoConfig, baseUrl: string, grpcAddress: string | undefined): AgentInterface[] {
  const bindings = (tenant: string): AgentInterface[] => [
    { url: baseUrl, protocolBinding: 'JSONRPC', tenant, protocolVersion: A2A_PROTOCOL_VERSION },
    { url: baseUrl, protocolBinding: 'HTTP+JSON', tenant, protocolVersion: A2A_PROTOCOL_VERSION },
    ...(grpcAddress
      ? [{ url: grpcAddress, protocolBinding: 'GRPC', tenant, protocolVersion: A2A_PROTOCOL_VERSION }]
      : []),
  ];
  const own = bindings('');
  return [
    ...(config.a2a.legacyCompat ? duplicateInterfacesForLegacy(own, ['JSONRPC', 'HTTP+JSON']) : own),
    ...config.a2a.tenants.flatMap(bindings),
  ];
}

/** The card for authenticated callers: the public card plus tool counts and remote peers' card URLs. */
export function buildExtendedAgentCard(inputs: CardInputs): AgentCard {
  return { ...buildAgentCard(inputs), skills: skills(inputs.root, true) };
}

function skills(root: LlmAgent, extended: boolean): AgentSkill[] {
  const subAgents = walkAgents(root).slice(1);
  const orchestrator = skill(root, ['orchestration'], extended);
  if (subAgents.length > 0) {
    orchestrator.description = `${root.description} Delegates to: ${subAgents.map((a) => a.name).join(', ')}.`;
  }
  return [orchestrator, ...subAgents.map((agent) => skill(agent, [`sub_agent:${root.name}`], extended))];
}

function skill(agent: Agent, tags: string[], extended: boolean): AgentSkill {
  let description = agent.description;
  if (extended && agent.kind === 'llm' && agent.tools.length > 0) description += ` (${agent.tools.length} tools)`;
  if (extended && agent.kind === 'remote') description += ` (remote agent, card: ${agent.cardUrl})`;
  return {
    id: agent.name,
    name: agent.name,
    description,
    tags: [...tags, ...(agent.kind === 'remote' ? ['remote'] : []), ...agent.keywords.slice(0, 10)],
    examples: [],
    inputModes: ['text/plain'],
    outputModes: ['text/plain'],
    securityRequirements: [],
  };
}

function security(config: LangoConfig): {
  securitySchemes: Record<string, SecurityScheme>;
  securityRequirements: SecurityRequirement[];
} {
  const auth = config.a2a.auth;
  const securitySchemes: Record<string, SecurityScheme> = {};
  const securityRequirements: SecurityRequirement[] = [];
  const tls = config.server.tls;
  if (tls?.clientCa) {
    securitySchemes[MTLS_SCHEME] = {
      scheme: { $case: 'mtlsSecurityScheme', value: { description: 'A client certificate the node operator issued.' } },
    };
  }
  const mtls = tls?.clientCa ? { [MTLS_SCHEME]: { list: [] } } : undefined;
  if (!auth) {
    if (mtls) securityRequirements.push({ schemes: mtls });
    return { securitySchemes, securityRequirements };
  }
  const kinds = credentialKinds(config);
  if (kinds.bearer) {
    securitySchemes[BEARER_SCHEME] = {
      scheme: {
        $case: 'httpAuthSecurityScheme',
        value: { description: 'Bearer token issued by the node operator.', scheme: 'Bearer', bearerFormat: '' },
      },
    };
    securityRequirements.push({ schemes: { [BEARER_SCHEME]: { list: [] } } });
  }
  if (kinds.apiKey) {
    securitySchemes[API_KEY_SCHEME] = {
      scheme: {
        $case: 'apiKeySecurityScheme',
        value: { description: 'API key issued by the node operator.', location: 'header', name: auth.apiKeyHeader },
      },
    };
    securityRequirements.push({ schemes: { [API_KEY_SCHEME]: { list: [] } } });
  }
  if (auth.oidc) {
    const { name, scheme } = tokenScheme(auth.oidc);
    securitySchemes[name] = scheme;
    securityRequirements.push({ schemes: { [name]: { list: [] } } });
  }
  if (mtls) {
    // A required certificate comes with every other credential; an optional one is a way in of its own.
    if (tls?.clientCert === 'required' && securityRequirements.length > 0)
      for (const requirement of securityRequirements) Object.assign(requirement.schemes, mtls);
    else securityRequirements.push({ schemes: mtls });
  }
  return { securitySchemes, securityRequirements };
}

/** How a client gets a token of `oidc`: OpenID Connect discovery, or OAuth 2 client credentials at its token URL. */
function tokenScheme(oidc: NonNullable<NonNullable<LangoConfig['a2a']['auth']>['oidc']>): {
  name: string;
  scheme: SecurityScheme;
} {
  const discovery = `${oidc.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const description = `A JWT access token from ${oidc.issuer} for ${[oidc.audience].flat().join(' or ')}.`;
  if (oidc.cardScheme === 'openIdConnect') {
    return {
      name: OIDC_SCHEME,
      scheme: { scheme: { $case: 'openIdConnectSecurityScheme', value: { description, openIdConnectUrl: discovery } } },
    };
  }
  const scopes = Object.fromEntries(
    Object.entries(oidc.scopes).map(([scope, { description: text }]) => [scope, text ?? scope]),
  );
  return {
    name: OAUTH2_SCHEME,
    scheme: {
      scheme: {
        $case: 'oauth2SecurityScheme',
        value: {
          description,
          oauth2MetadataUrl: discovery,
          flows: {
            flow: { $case: 'clientCredentials', value: { tokenUrl: oidc.tokenUrl ?? '', refreshUrl: '', scopes } },
          },
        },
      },
    },
  };
}
