import fs from 'node:fs';
import path from 'node:path';
import { ToolExecutionError } from '../../errors';
import {
  formatSkillMarkdown,
  loadSkills,
  parseSkillMarkdown,
  type SkillDefinition,
  type SkillParameter,
} from '../operator/skills';

/** What `create_skill` asks for: a skill's front matter fields and body. */
export interface NewSkill {
  name: string;
  description: string;
  /** Omitted: the operator's parser decides from the body (a fenced script or `#!` line is a script). */
  type?: 'script' | 'prompt';
  parameters: SkillParameter[];
  body: string;
  overwrite: boolean;
}

/**
 * The operator's skills as files, `<skillsDir>/<name>/SKILL.md`, written and
 * listed for the librarian. Validation is the operator's own parser
 * (src/tools/operator/skills), so what the librarian writes is exactly what
 * the operator will load as `skill_<name>`.
 */
export class SkillLibrary {
  constructor(private readonly dir: string) {}

  /** Writes the skill after parsing it back; refuses to replace one unless `overwrite`. */
  create(input: NewSkill): SkillDefinition & { file: string; replaced: boolean } {
    const folder = path.join(this.dir, input.name);
    const file = path.join(folder, 'SKILL.md');
    const text = formatSkillMarkdown({
      name: input.name,
      description: input.description,
      parameters: input.parameters,
      active: true,
      kind: input.type,
      body: input.body,
    });
    const skill = parseSkillMarkdown(text, path.join(input.name, 'SKILL.md'));
    const exists = fs.existsSync(file);
    if (exists && !input.overwrite) {
      throw new ToolExecutionError(`skill "${input.name}" already exists; pass overwrite: true to replace it`);
    }
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    // Write then rename, so the operator never reads half a file.
    const temp = path.join(folder, `.SKILL.md.${process.pid}.tmp`);
    fs.writeFileSync(temp, text, { mode: 0o600 });
    fs.renameSync(temp, file);
    return { ...skill, file, replaced: exists };
  }

  /** Every skill on disk, and the folders whose SKILL.md is unusable, with the reason. */
  list(): { skills: SkillDefinition[]; invalid: { name: string; error: string }[] } {
    const scan = loadSkills(this.dir);
    return {
      skills: scan.skills,
      invalid: scan.errors.map((e) => ({ name: path.basename(e.dir), error: e.reason })),
    };
  }
}
