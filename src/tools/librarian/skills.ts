import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import { ToolExecutionError } from '../../errors';

/**
 * The operator's skills as files: `<skillsDir>/<name>/SKILL.md`, YAML front
 * matter (name, description, parameters) then a body (a script or a prompt
 * template). The operator turns each into a `skill_<name>` tool. This is a
 * minimal validator of that layout, kept to what the librarian writes; the
 * operator's parser (src/tools/operator/skills/) is the reader of record.
 */

/** Skill names: they become `skill_<name>` tool names, so at most 58 characters. */
export const SkillName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,57}$/, 'lower-case letters, digits, _ and -, starting with a letter, at most 58');

/** One declared parameter of a skill. */
export const SkillParameter = z
  .object({
    type: z.enum(['string', 'number', 'boolean']).default('string'),
    description: z.string().max(500).default(''),
    required: z.boolean().default(false),
  })
  .strict();
export type SkillParameter = z.infer<typeof SkillParameter>;

/** The front matter of a SKILL.md. */
export const SkillFrontMatter = z
  .object({
    name: SkillName,
    description: z.string().trim().min(1).max(1000),
    type: z.enum(['script', 'prompt']).default('prompt'),
    parameters: z.record(z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/), SkillParameter).default({}),
  })
  .strict();
export type SkillFrontMatter = z.infer<typeof SkillFrontMatter>;

/** A skill read back from disk: its front matter, body and file. */
export interface SkillFile extends SkillFrontMatter {
  body: string;
  file: string;
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

/** Parses and validates SKILL.md text; throws a ToolExecutionError naming what is wrong. */
export function parseSkillMarkdown(text: string, file: string): SkillFile {
  const match = FRONT_MATTER.exec(text);
  if (!match) throw new ToolExecutionError(`${file}: no YAML front matter between --- lines`);
  let data: unknown;
  try {
    data = YAML.parse(match[1]);
  } catch (error) {
    throw new ToolExecutionError(`${file}: front matter is not valid YAML: ${(error as Error).message}`);
  }
  const parsed = SkillFrontMatter.safeParse(data);
  if (!parsed.success) {
    throw new ToolExecutionError(
      `${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'front matter'}: ${i.message}`).join('; ')}`,
    );
  }
  const body = match[2].trim();
  if (!body) throw new ToolExecutionError(`${file}: the body (script or prompt template) is empty`);
  return { ...parsed.data, body, file };
}

/** Renders a skill as SKILL.md text. */
export function renderSkillMarkdown(skill: SkillFrontMatter & { body: string }): string {
  const front = YAML.stringify({
    name: skill.name,
    description: skill.description,
    type: skill.type,
    ...(Object.keys(skill.parameters).length ? { parameters: skill.parameters } : {}),
  });
  return `---\n${front}---\n${skill.body.trim()}\n`;
}

/** Writes and lists skills under one directory. */
export class SkillLibrary {
  constructor(private readonly dir: string) {}

  /** Writes `<dir>/<name>/SKILL.md` after validating it; refuses to replace one unless `overwrite`. */
  create(input: SkillFrontMatter & { body: string; overwrite: boolean }): SkillFile & { replaced: boolean } {
    const folder = path.join(this.dir, input.name);
    const file = path.join(folder, 'SKILL.md');
    const text = renderSkillMarkdown(input);
    const skill = parseSkillMarkdown(text, file);
    const exists = fs.existsSync(file);
    if (exists && !input.overwrite) {
      throw new ToolExecutionError(`skill "${input.name}" already exists; pass overwrite: true to replace it`);
    }
    fs.mkdirSync(folder, { recursive: true });
    // Write then rename, so the operator never reads half a file.
    const temp = path.join(folder, `.SKILL.md.${process.pid}.tmp`);
    fs.writeFileSync(temp, text, { mode: 0o644 });
    fs.renameSync(temp, file);
    return { ...skill, replaced: exists };
  }

  /** Every skill folder, valid or not: invalid ones carry the reason. */
  list(): { skills: SkillFile[]; invalid: { name: string; error: string }[] } {
    const skills: SkillFile[] = [];
    const invalid: { name: string; error: string }[] = [];
    if (!fs.existsSync(this.dir)) return { skills, invalid };
    for (const entry of fs.readdirSync(this.dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isDirectory()) continue;
      const file = path.join(this.dir, entry.name, 'SKILL.md');
      try {
        const skill = parseSkillMarkdown(fs.readFileSync(file, 'utf8'), file);
        if (skill.name !== entry.name) throw new ToolExecutionError(`${file}: name "${skill.name}" differs from its folder`);
        skills.push(skill);
      } catch (error) {
        invalid.push({ name: entry.name, error: error instanceof Error ? error.message : String(error) });
      }
    }
    return { skills, invalid };
  }
}
