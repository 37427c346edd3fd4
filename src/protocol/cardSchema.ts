import { z } from 'zod';

/**
 * Zod schemas for A2A agent cards as they travel as JSON: v1.0 (ProtoJSON,
 * `supportedInterfaces`) and v0.3 (`url` + `preferredTransport`). A card is
 * untrusted input from a peer, so it is parsed here before anything reads it;
 * the A2A server also validates the node's own card against
 * {@link AgentCardV1} before publishing it.
 *
 * Objects are loose (unknown fields pass through: newer minor versions add
 * fields) but every field we read is typed and bounded. ProtoJSON omits empty
 * repeated fields, so arrays default to `[]`.
 */

/** Longest string we accept in any card field; the whole body is capped separately. */
const MAX_TEXT = 10_000;
const Text = z.string().max(MAX_TEXT);
const ShortText = z.string().max(1_000);
/** Interface URLs are checked for scheme and origin by the loader; here only their shape. */
const CardUrl = z.string().min(1).max(2_048);
const StringList = z.array(ShortText).max(100);

/** A security scheme: v1.0 ProtoJSON oneof (`{httpAuthSecurityScheme: …}`), the SDK's in-memory form (`{scheme: {$case, value}}`) or v0.3 (`{type: …}`). */
const SecurityScheme = z
  .looseObject({})
  .refine((o) => Object.keys(o).length > 0, { message: 'a security scheme must name its kind' });

const JwsSignature = z.looseObject({
  protected: z.string().min(1).max(MAX_TEXT),
  signature: z.string().min(1).max(MAX_TEXT),
  header: z.record(z.string(), z.unknown()).optional(),
});

const Provider = z.looseObject({ organization: ShortText, url: ShortText.optional() });

const Extension = z.looseObject({
  uri: CardUrl,
  description: Text.optional(),
  required: z.boolean().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
});

/** One entry of a v1.0 card's `supportedInterfaces`: where and how the agent is reached. */
export const AgentInterfaceV1 = z.looseObject({
  url: CardUrl,
  /** `JSONRPC`, `HTTP+JSON` or `GRPC` (open set: other bindings are ignored by the client). */
  protocolBinding: z.string().min(1).max(64),
  /** Empty or absent means the card's own version (1.0); `0.3` marks a v0.3 mirror. */
  protocolVersion: z.string().max(32).optional(),
  tenant: z.string().max(256).optional(),
});
export type AgentInterfaceV1 = z.infer<typeof AgentInterfaceV1>;

const SkillV1 = z.looseObject({
  id: ShortText.min(1),
  name: ShortText.min(1),
  description: Text.default(''),
  tags: StringList.default([]),
  examples: z.array(Text).max(100).default([]),
  inputModes: StringList.default([]),
  outputModes: StringList.default([]),
  securityRequirements: z.array(z.unknown()).max(100).optional(),
});

/** An A2A v1.0 agent card as served at `/.well-known/agent-card.json`. */
export const AgentCardV1 = z.looseObject({
  name: ShortText.min(1),
  description: Text,
  supportedInterfaces: z.array(AgentInterfaceV1).min(1, 'a card needs at least one supported interface').max(32),
  provider: Provider.optional(),
  version: ShortText.min(1),
  documentationUrl: ShortText.optional(),
  capabilities: z
    .looseObject({
      streaming: z.boolean().optional(),
      pushNotifications: z.boolean().optional(),
      extensions: z.array(Extension).max(100).default([]),
      extendedAgentCard: z.boolean().optional(),
    })
    .default({ extensions: [] }),
  securitySchemes: z.record(z.string(), SecurityScheme).default({}),
  securityRequirements: z.array(z.unknown()).max(100).default([]),
  defaultInputModes: StringList.default([]),
  defaultOutputModes: StringList.default([]),
  skills: z.array(SkillV1).max(200).default([]),
  signatures: z.array(JwsSignature).max(16).default([]),
  iconUrl: ShortText.optional(),
});
export type AgentCardV1 = z.infer<typeof AgentCardV1>;

/** One entry of a v0.3 card's `additionalInterfaces`. */
export const AgentInterfaceV03 = z.looseObject({
  url: CardUrl,
  /** `JSONRPC`, `HTTP+JSON` or `GRPC`. */
  transport: z.string().min(1).max(64),
});
export type AgentInterfaceV03 = z.infer<typeof AgentInterfaceV03>;

const SkillV03 = z.looseObject({
  id: ShortText.min(1),
  name: ShortText.min(1),
  description: Text.default(''),
  tags: StringList.default([]),
  examples: z.array(Text).max(100).default([]),
  inputModes: StringList.optional(),
  outputModes: StringList.optional(),
  security: z
    .array(z.record(z.string(), z.array(z.string())))
    .max(100)
    .optional(),
});

/** An A2A v0.3 agent card as served at `/.well-known/agent.json` (or agent-card.json by 0.3.x SDKs). */
export const AgentCardV03 = z.looseObject({
  name: ShortText.min(1),
  description: Text,
  url: CardUrl,
  preferredTransport: z.string().max(64).default('JSONRPC'),
  additionalInterfaces: z.array(AgentInterfaceV03).max(32).default([]),
  protocolVersion: z.string().max(32).default('0.3.0'),
  provider: Provider.optional(),
  version: ShortText.min(1),
  documentationUrl: ShortText.optional(),
  capabilities: z
    .looseObject({
      streaming: z.boolean().optional(),
      pushNotifications: z.boolean().optional(),
      stateTransitionHistory: z.boolean().optional(),
      extensions: z.array(Extension).max(100).optional(),
    })
    .default({}),
  securitySchemes: z.record(z.string(), SecurityScheme).default({}),
  security: z
    .array(z.record(z.string(), z.array(z.string())))
    .max(100)
    .optional(),
  defaultInputModes: StringList.default([]),
  defaultOutputModes: StringList.default([]),
  skills: z.array(SkillV03).max(200).default([]),
  supportsAuthenticatedExtendedCard: z.boolean().optional(),
  signatures: z.array(JwsSignature).max(16).default([]),
  iconUrl: ShortText.optional(),
});
export type AgentCardV03 = z.infer<typeof AgentCardV03>;

/** A validated card of either version, tagged so callers switch on `version`. */
export type ParsedAgentCard = { version: '1.0'; card: AgentCardV1 } | { version: '0.3'; card: AgentCardV03 };

/** Result of {@link parseAgentCard}: the card, or one line per problem (`path: message`). */
export type AgentCardParseResult = ({ ok: true } & ParsedAgentCard) | { ok: false; issues: string[] };

/**
 * Which protocol version a raw card is shaped for, by the same rule as the
 * SDK's resolver: a non-empty `supportedInterfaces` is v1.0 (superset cards
 * carrying both shapes count as v1.0); a top-level `url`, a v0.3-only field
 * or a `protocolVersion` below 1 is v0.3. `undefined` when it is neither.
 */
export function detectCardVersion(raw: unknown): '1.0' | '0.3' | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const card = raw as Record<string, unknown>;
  if (Array.isArray(card.supportedInterfaces) && card.supportedInterfaces.length > 0) return '1.0';
  if (typeof card.url === 'string') return '0.3';
  if ('preferredTransport' in card || 'additionalInterfaces' in card) return '0.3';
  if (typeof card.protocolVersion === 'string' && /^0\./.test(card.protocolVersion)) return '0.3';
  if ('supportedInterfaces' in card) return '1.0';
  return undefined;
}

/**
 * Validates an untrusted card (already JSON-parsed) as v1.0 or v0.3.
 * Never throws: a bad card yields `ok: false` with readable issues.
 * @example
 * const parsed = parseAgentCard(JSON.parse(body));
 * if (!parsed.ok) logger.warn('card rejected', { issues: parsed.issues });
 * else if (parsed.version === '1.0') parsed.card.supportedInterfaces[0].url;
 */
export function parseAgentCard(raw: unknown): AgentCardParseResult {
  const version = detectCardVersion(raw);
  if (!version) {
    return { ok: false, issues: ['not an agent card: neither supportedInterfaces (v1.0) nor url (v0.3)'] };
  }
  const result = version === '1.0' ? AgentCardV1.safeParse(raw) : AgentCardV03.safeParse(raw);
  if (!result.success) {
    const issues = result.error.issues
      .slice(0, 10)
      .map((i) => `${i.path.length ? i.path.join('.') : '(card)'}: ${i.message}`);
    return { ok: false, issues };
  }
  return version === '1.0'
    ? { ok: true, version, card: result.data as AgentCardV1 }
    : { ok: true, version, card: result.data as AgentCardV03 };
}
