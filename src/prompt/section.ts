/**
 * Prompt sections: named pieces of a system prompt with a priority. A prompt
 * is its sections sorted by priority (lower first) and joined; replacing or
 * removing one section (orchestrator isolation, per-agent overrides) never
 * touches the others.
 */

/** The well-known sections, plus custom ones (`custom:<slug>`) from extra files. */
export type SectionId =
  'identity' | 'agentIdentity' | 'safety' | 'conversationRules' | 'toolUsage' | `custom:${string}`;

/** One piece of a system prompt. */
export interface PromptSection {
  readonly id: SectionId;
  /** Lower comes first. */
  readonly priority: number;
  /** Markdown as it goes into the prompt; an empty section is left out. */
  readonly content: string;
  /** Where it came from: `built-in` or the file path, for `lango agents` and error messages. */
  readonly source: string;
}

/** The shared sections of a node, as loaded by `loadPromptSections`. */
export type PromptSections = readonly PromptSection[];

/** Priority of each well-known section; custom sections start at `custom`. */
export const SECTION_PRIORITY = Object.freeze({
  identity: 100,
  agentIdentity: 150,
  safety: 200,
  conversationRules: 300,
  toolUsage: 400,
  custom: 900,
});

/** The file that overrides each well-known shared section in `agent.promptsDir`. */
export const SECTION_FILES = Object.freeze({
  identity: 'AGENTS.md',
  safety: 'SAFETY.md',
  conversationRules: 'CONVERSATION_RULES.md',
  toolUsage: 'TOOL_USAGE.md',
} as const);

/** The sections a file in `<promptsDir>/agents/<name>/` overrides for that agent alone. */
export const AGENT_SECTION_FILES = Object.freeze({
  'IDENTITY.md': 'agentIdentity',
  'AGENTS.md': 'agentIdentity',
  'SAFETY.md': 'safety',
  'CONVERSATION_RULES.md': 'conversationRules',
  'TOOL_USAGE.md': 'toolUsage',
} as const satisfies Record<string, SectionId>);

/** `sections` with `section` in place of the one with the same id (or added). */
export function withSection(sections: PromptSections, section: PromptSection): PromptSections {
  return [...sections.filter((existing) => existing.id !== section.id), section];
}

/** `sections` without the section `id`. */
export function withoutSection(sections: PromptSections, id: SectionId): PromptSections {
  return sections.filter((section) => section.id !== id);
}

/** The section `id`, or undefined. */
export function findSection(sections: PromptSections, id: SectionId): PromptSection | undefined {
  return sections.find((section) => section.id === id);
}

/**
 * Assembles a prompt: non-empty sections by priority (stable for equal
 * priorities), separated by a blank line.
 * @example
 * assemblePrompt([{ id: 'safety', priority: 200, content: 'B', source: 'built-in' },
 *                 { id: 'identity', priority: 100, content: 'A', source: 'built-in' }]); // 'A\n\nB'
 */
export function assemblePrompt(sections: PromptSections): string {
  return [...sections]
    .map((section, index) => ({ section, index }))
    .sort((a, b) => a.section.priority - b.section.priority || a.index - b.index)
    .map(({ section }) => section.content.trim())
    .filter((content) => content.length > 0)
    .join('\n\n');
}
