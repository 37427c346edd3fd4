import fs from 'node:fs';
import path from 'node:path';
import { errorMessage, ConfigError } from '../errors';
import type { Logger } from '../log/logger';
import type { SecretRegistry } from '../log/redact';
import { defaultPromptSections } from './defaults';
import {
  SECTION_FILES,
  SECTION_PRIORITY,
  withSection,
  type PromptSection,
  type PromptSections,
  type SectionId,
} from './section';

/** Inputs of {@link loadPromptSections}. */
export interface LoadPromptSectionsOptions {
  /** `agent.promptsDir`; built-in defaults only when unset. */
  promptsDir?: string;
  logger: Logger;
  /** Known secret values, masked should a prompt file contain one (prompts reach the model). */
  secrets?: SecretRegistry;
}

/** Reads a prompt file, turning any failure into an error that names the file. */
export function readPromptFile(file: string, secrets?: SecretRegistry, logger?: Logger): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? errorMessage(err);
    throw new ConfigError(`cannot read prompt file ${file}: ${reason}`, [
      `agent.promptsDir: cannot read ${file} (${reason})`,
    ]);
  }
  if (!secrets) return text;
  const masked = secrets.redactText(text);
  if (masked !== text) logger?.warn('prompt file contains a secret value; masked it', { file });
  return masked;
}

/** The `.md` files of a directory, sorted by name so the prompt is the same on every machine. */
function markdownFiles(dir: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ConfigError(`cannot read prompts directory ${dir}: ${reason}`, [
      `agent.promptsDir: cannot read ${dir} (${reason})`,
    ]);
  }
  return (
    entries
      // A directory or dangling link named *.md is kept so that reading it fails loudly, naming it.
      .filter((entry) => entry.name.endsWith('.md'))
      .map((entry) => entry.name)
      .sort()
  );
}

/** `STYLE_GUIDE.md` → section id `custom:style_guide`, heading `## STYLE GUIDE`. */
function customSection(file: string, fileName: string, content: string, index: number): PromptSection {
  const stem = fileName.slice(0, -'.md'.length);
  const body = content.trim();
  return {
    id: `custom:${stem.toLowerCase()}`,
    priority: SECTION_PRIORITY.custom + index,
    content: body ? `## ${stem.replace(/_/g, ' ')}\n${body}` : '',
    source: file,
  };
}

/**
 * Loads the `.md` files of one directory as sections: known file names
 * (`known`: file → section id) replace that section, any other `.md` becomes
 * a custom section (priority 900+).
 */
export function loadSectionFiles(
  dir: string,
  known: Readonly<Record<string, SectionId>>,
  options: { logger: Logger; secrets?: SecretRegistry },
): PromptSection[] {
  const sections: PromptSection[] = [];
  let customIndex = 0;
  for (const fileName of markdownFiles(dir)) {
    const file = path.join(dir, fileName);
    const content = readPromptFile(file, options.secrets, options.logger);
    const id = known[fileName];
    if (!content.trim())
      options.logger.warn('prompt file is empty; its section is left out', {
        file,
      });
    sections.push(
      id
        ? {
            id,
            priority: SECTION_PRIORITY[id as keyof typeof SECTION_PRIORITY],
            content,
            source: file,
          }
        : customSection(file, fileName, content, customIndex++),
    );
  }
  return sections;
}

const SHARED_FILES: Readonly<Record<string, SectionId>> = Object.freeze(
  Object.fromEntries(Object.entries(SECTION_FILES).map(([id, file]) => [file, id as SectionId])),
);

/**
 * The node's shared prompt sections: the built-in identity, safety,
 * conversation rules and tool usage, each replaced by its file in
 * `promptsDir` (AGENTS.md, SAFETY.md, CONVERSATION_RULES.md, TOOL_USAGE.md)
 * when present; any other `.md` there is added as a custom section. A missing
 * or unreadable directory or file is a ConfigError naming it.
 * @example
 * const sections = loadPromptSections({ promptsDir: './prompts', logger });
 * const prompt = buildSystemPrompt(sections);
 */
export function loadPromptSections(options: LoadPromptSectionsOptions): PromptSections {
  let sections = defaultPromptSections();
  if (!options.promptsDir) return sections;
  const dir = path.resolve(options.promptsDir);
  if (!fs.existsSync(dir)) {
    throw new ConfigError(`prompts directory ${dir} does not exist`, [`agent.promptsDir: ${dir} does not exist`]);
  }
  for (const section of loadSectionFiles(dir, SHARED_FILES, options)) {
    sections = withSection(sections, Object.freeze(section));
    options.logger.debug('prompt section loaded from file', {
      section: section.id,
      file: section.source,
    });
  }
  return Object.freeze(sections);
}
