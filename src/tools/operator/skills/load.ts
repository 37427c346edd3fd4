import fs from 'node:fs';
import path from 'node:path';
import { parseSkillMarkdown, type SkillDefinition } from './skillFile';
import { errorMessage } from '../../../errors';

/** A skill found on disk, with the folder it lives in. */
export interface LoadedSkill extends SkillDefinition {
  dir: string;
}

/** What {@link loadSkills} found: usable skills, and folders it had to skip with the reason. */
export interface SkillScan {
  skills: LoadedSkill[];
  errors: { dir: string; reason: string }[];
}

/**
 * Reads every `<skillsDir>/<folder>/SKILL.md`. A folder whose SKILL.md does
 * not parse, or whose name is taken by an earlier folder, is reported in
 * `errors` and skipped: one bad skill never hides the others.
 * @example
 * const { skills, errors } = loadSkills(path.join(dataDir, 'skills'));
 */
export function loadSkills(skillsDir: string): SkillScan {
  const scan: SkillScan = { skills: [], errors: [] };
  if (!fs.existsSync(skillsDir)) return scan;
  const seen = new Set<string>();
  for (const entry of fs.readdirSync(skillsDir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory()) continue;
    const dir = path.join(skillsDir, entry.name);
    const file = path.join(dir, 'SKILL.md');
    if (!fs.existsSync(file)) continue;
    try {
      const skill = parseSkillMarkdown(fs.readFileSync(file, 'utf8'), path.join(entry.name, 'SKILL.md'));
      if (seen.has(skill.name)) {
        scan.errors.push({ dir, reason: `skill name "${skill.name}" is already used by another folder` });
        continue;
      }
      seen.add(skill.name);
      scan.skills.push({ ...skill, dir });
    } catch (error) {
      scan.errors.push({ dir, reason: errorMessage(error) });
    }
  }
  return scan;
}
