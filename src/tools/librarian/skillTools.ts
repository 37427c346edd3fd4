import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { SkillName, SkillParameter, type SkillLibrary } from './skills';

/** `create_skill` and `list_skills` over the operator's skill folder. */
export function createSkillTools(options: { skills: SkillLibrary }): AnyTool[] {
  const { skills } = options;
  return [
    defineTool({
      name: 'create_skill',
      description:
        'Writes an operator skill as <dataDir>/skills/<name>/SKILL.md (front matter: name, description, type, parameters; body: the script or prompt template). Refuses to replace an existing skill unless overwrite is true.',
      parameters: z.object({
        name: SkillName,
        description: z.string().trim().min(1).max(1000),
        type: z.enum(['script', 'prompt']).default('prompt'),
        parameters: z.record(z.string(), SkillParameter).default({}),
        body: z.string().trim().min(1).max(50_000),
        overwrite: z.boolean().default(false),
      }),
      execute: async (args) => {
        const skill = skills.create(args);
        return { created: skill.name, file: skill.file, replaced: skill.replaced };
      },
    }),
    defineTool({
      name: 'list_skills',
      description: 'Lists the operator skills on disk with their descriptions and parameters, and any invalid SKILL.md with the reason.',
      parameters: z.object({}),
      execute: async () => {
        const { skills: found, invalid } = skills.list();
        return {
          skills: found.map((s) => ({ name: s.name, description: s.description, type: s.type, parameters: s.parameters })),
          ...(invalid.length ? { invalid } : {}),
        };
      },
    }),
  ];
}
