import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log/logger';
import { silentLogger } from '../log/logger';
import type { SecretRegistry } from '../log/redact';
import type { SubAgentPromptFunc } from '../orchestration/tree';
import { agentSpecs } from '../orchestration/specs';
import { ORCHESTRATOR_IDENTITY } from './defaults';
import { loadSectionFiles } from './loader';
import {
  AGENT_SECTION_FILES,
  SECTION_PRIORITY,
  assemblePrompt,
  withSection,
  withoutSection,
  type PromptSection,
  type PromptSections,
} from './section';

/**
 * The single-agent system prompt: every section, identity and tool usage
 * included ("Single-agent prompt unaffected").
 * @example
 * buildAgentTree({ tools, multiAgent: false, systemPrompt: buildSystemPrompt(sections) });
 */
export function buildSystemPrompt(sections: PromptSections): string {
  return assemblePrompt(sections);
}

/**
 * The orchestrator's system prompt: the identity section replaced by a
 * delegation-focused identity and the tool-usage section removed, because
 * both name tool families ("Exec", "Browser", "Crypto") a model may take for
 * agent names ("Orchestrator system prompt isolation"). Safety, conversation
 * rules and custom sections stay.
 * @example
 * buildAgentTree({ tools, systemPrompt: buildOrchestratorSystemPrompt(sections) });
 */
export function buildOrchestratorSystemPrompt(sections: PromptSections): string {
  const isolated = withSection(withoutSection(sections, 'toolUsage'), {
    id: 'identity',
    priority: SECTION_PRIORITY.identity,
    content: ORCHESTRATOR_IDENTITY,
    source: 'built-in',
  });
  return assemblePrompt(isolated);
}

/** Inputs of {@link createSubAgentPrompt}. */
export interface SubAgentPromptOptions {
  /** The shared sections (`loadPromptSections`). */
  sections: PromptSections;
  /** `agent.promptsDir`; per-agent overrides are read from `<promptsDir>/agents/<name>/`. */
  promptsDir?: string;
  logger?: Logger;
  secrets?: SecretRegistry;
}

/** Reads every `<promptsDir>/agents/<name>/` once, so the returned function does no I/O. */
function loadAgentOverrides(options: SubAgentPromptOptions, logger: Logger): Map<string, PromptSection[]> {
  const overrides = new Map<string, PromptSection[]>();
  if (!options.promptsDir) return overrides;
  const agentsDir = path.join(path.resolve(options.promptsDir), 'agents');
  if (!fs.existsSync(agentsDir)) return overrides;
  const known = new Set<string>(agentSpecs.map((spec) => spec.name));
  for (const entry of fs.readdirSync(agentsDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    if (!known.has(entry.name)) {
      logger.warn('prompt overrides for an unknown specialist are ignored', {
        dir: path.join(agentsDir, entry.name),
        known: [...known],
      });
      continue;
    }
    const sections = loadSectionFiles(path.join(agentsDir, entry.name), AGENT_SECTION_FILES, {
      logger,
      secrets: options.secrets,
    });
    overrides.set(entry.name, sections);
  }
  return overrides;
}

/**
 * Creates the {@link SubAgentPromptFunc} for `buildAgentTree`: a specialist's
 * prompt is its identity (the spec's default instruction, or
 * `agents/<name>/IDENTITY.md`), the shared safety, conversation-rule and
 * custom sections (each replaceable by the same file in `agents/<name>/`),
 * and any extra `.md` of that folder. The shared identity and tool usage,
 * which describe every tool family, are left out. Files are read once, here;
 * an unreadable one is a ConfigError naming it.
 * @example
 * const subAgentPrompt = createSubAgentPrompt({ sections, promptsDir: './prompts' });
 * buildAgentTree({ tools, subAgentPrompt });
 */
export function createSubAgentPrompt(options: SubAgentPromptOptions): SubAgentPromptFunc {
  const logger = options.logger ?? silentLogger;
  const overrides = loadAgentOverrides(options, logger);
  const shared = withoutSection(withoutSection(options.sections, 'identity'), 'toolUsage');
  return (agentName, defaultInstruction) => {
    let sections = withSection(shared, {
      id: 'agentIdentity',
      priority: SECTION_PRIORITY.agentIdentity,
      content: defaultInstruction,
      source: 'built-in',
    });
    for (const override of overrides.get(agentName) ?? []) sections = withSection(sections, override);
    return assemblePrompt(sections);
  };
}
