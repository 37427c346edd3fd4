import type { AgentExtension } from '@a2a-js/sdk';

/**
 * Skill-targeted sends (issue 33), offered as an extension until A2A
 * carries them itself. It follows the proposal as it stands (a2aproject/A2A
 * #1989, "Client-directed skill selection", consolidating #1812's optional
 * `skill_id` on the send): a send may name one skill of the card, by its
 * `id`, and the node routes the message straight to the agent owning it —
 * a local specialist or a remote agent — with no routing step by the model.
 * A v1.0 `SendMessageConfiguration` has no such field yet, so the skill id
 * travels in the send request's own `metadata` (a `SendMessageRequest`
 * field on every binding, per request as the configuration is) under
 * {@link SKILL_METADATA_KEY}. The proposal leaves an unknown id's fate open
 * (error or ignore); this node refuses it as invalid params (-32602, HTTP
 * 400, gRPC INVALID_ARGUMENT) naming the skill ids the caller may use, and
 * a skill outside the caller's grant is no such skill. A send without the
 * key is routed as before.
 */

/** The extension's URI, listed in the card's `capabilities.extensions`. */
export const SKILL_EXTENSION = 'https://lango.dev/a2a/ext/skill/v1';

/** Where a send request's `metadata` names the skill it is for (a skill `id` of the card). */
export const SKILL_METADATA_KEY = `${SKILL_EXTENSION}/skillId`;

/** The card's extension entry. */
export function skillExtension(): AgentExtension {
  return {
    uri: SKILL_EXTENSION,
    description:
      'Skill-targeted sends (A2A #1989): a SendMessage whose request metadata names a skill id of this card under ' +
      `"${SKILL_METADATA_KEY}" goes straight to the agent owning that skill; an unknown id is invalid params.`,
    required: false,
    params: { metadataKey: SKILL_METADATA_KEY },
  };
}

/** The field an invalid skill id is reported against (what the caller wrote). */
export const SKILL_FIELD = `metadata["${SKILL_METADATA_KEY}"]`;

/**
 * The skill a send request's `metadata` names: undefined when it names
 * none, else the id, or `{ invalid }` saying what is wrong with the value.
 */
export function requestedSkill(
  metadata: Record<string, unknown> | undefined,
): string | { invalid: string } | undefined {
  if (!metadata || !Object.hasOwn(metadata, SKILL_METADATA_KEY)) return undefined;
  const value = metadata[SKILL_METADATA_KEY];
  if (typeof value !== 'string' || value.trim() === '') return { invalid: 'must be a skill id of the agent card' };
  return value.trim();
}
