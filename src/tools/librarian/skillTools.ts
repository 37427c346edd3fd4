import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { SKILL_NAME, SkillParameter } from '../operator/skills';
import type { SkillLibrary } from './skills';
import { ToolExecutionError } from '../../errors';
import { mayReach } from '../../principal';

/** `create_skill` and `list_skills` over the operator's skill folder. */
export function createSkillTools(options: { skills: SkillLibrary }): AnyTool[] {
  const { skills } = options;
  return [
    defineTool({
      name: 'create_skill',
      description:
        'Writes an operator skill as <dataDir>/skills/<name>/SKILL.md: front matter (name, description, type, parameters) and a body, ' +
        'either a prompt template with {{parameter}} placeholders or a script (one fenced ```sh / ```bash / ```python / ```node block). ' +
        'Refuses to replace an existing skill unless overwrite is true. The operator offers it as skill_<name>.',
      parameters: z.object({
        name: z.string().regex(SKILL_NAME, 'lowercase letters, digits, _ and -, starting with a letter, at most 58'),
        description: z.string().trim().min(1).max(1000),
        type: z.enum(['script', 'prompt']).optional(),
        parameters: z.array(SkillParameter).max(20).default([]),
        body: z.string().trim().min(1).max(50_000),
        overwrite: z.boolean().default(false),
      }),
      execute: async (args, ctx) => {
        // A skill becomes a tool of the whole node, the owner's included: writing one is the skills family's reach.
        if (!mayReach(ctx.principal, 'toolFamilies', 'skills')) {
          throw new ToolExecutionError(`the caller "${ctx.principal.id}" is not granted the "skills" tool family`);
        }
        const skill = skills.create(args);
        return { created: skill.name, kind: skill.kind, file: skill.file, replaced: skill.replaced };
      },
    }),
    defineTool({
      name: 'list_skills',
      description:
        'Lists the operator skills on disk with their descriptions and parameters, and any unusable SKILL.md with the reason.',
      parameters: z.object({}),
      execute: async () => {
        const { skills: found, invalid } = skills.list();
        return {
          skills: found.map((s) => ({
            name: s.name,
            description: s.description,
            kind: s.kind,
            active: s.active,
            parameters: s.parameters,
          })),
          ...(invalid.length ? { invalid } : {}),
        };
      },
    }),
  ];
}
