/**
 * Prompt sections (identity, safety, conversation rules, tool usage) with
 * priorities, loaded from built-in defaults or `agent.promptsDir`, and the
 * three prompts built from them: single agent, orchestrator, specialist.
 */
export {
  buildOrchestratorSystemPrompt,
  buildSystemPrompt,
  createSubAgentPrompt,
  type SubAgentPromptOptions,
} from './build';
export {
  DEFAULT_CONVERSATION_RULES,
  DEFAULT_IDENTITY,
  DEFAULT_SAFETY,
  DEFAULT_TOOL_USAGE,
  ORCHESTRATOR_IDENTITY,
  defaultPromptSections,
} from './defaults';
export { loadPromptSections, type LoadPromptSectionsOptions } from './loader';
export {
  AGENT_SECTION_FILES,
  SECTION_FILES,
  SECTION_PRIORITY,
  assemblePrompt,
  findSection,
  withSection,
  withoutSection,
  type PromptSection,
  type PromptSections,
  type SectionId,
} from './section';
