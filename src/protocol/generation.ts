/**
 * The node's generation extension's names (issue 27; `a2a/generation.ts`
 * serves it, `federation/streamResume.ts` uses it on peers that offer it):
 * the A2A 1.1 draft's task `generation`, offered to v1.0 clients as an
 * extension until 1.1 is released.
 */

/** The extension's URI: named in the card's `capabilities.extensions` and in `A2A-Extensions` to activate it. */
export const GENERATION_EXTENSION = 'https://lango.dev/a2a/ext/generation/v1';

/** Where an activated request's task and events carry the generation: the extension's URI and the field's name. */
export const GENERATION_METADATA_KEY = `${GENERATION_EXTENSION}/generation`;
