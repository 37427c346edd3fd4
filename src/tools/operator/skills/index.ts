/**
 * Skills: folders with a SKILL.md under `<dataDir>/skills`, each active one
 * offered as the tool `skill_<name>`. The parser is public and stable: the
 * librarian's `create_skill` / `list_skills` reuse it.
 */
export {
  formatSkillMarkdown,
  parseSkillMarkdown,
  SKILL_NAME,
  SkillFrontMatter,
  SkillParameter,
  SkillParseError,
  type SkillDefinition,
  type SkillInterpreter,
} from './skillFile';
export { loadSkills, type LoadedSkill, type SkillScan } from './load';
export { createSkillTool, renderTemplate, type SkillToolOptions } from './skillTool';
