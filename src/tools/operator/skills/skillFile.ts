import YAML from 'yaml';
import { z } from 'zod';
import { errorMessage, LangoError } from '../../../errors';

/** A SKILL.md that cannot be used; `message` names the file and what is wrong. */
export class SkillParseError extends LangoError {}

/** A skill name: it becomes the tool `skill_<name>`, so 58 characters at most. */
export const SKILL_NAME = /^[a-z][a-z0-9_-]{0,57}$/;

/** One parameter of a skill, as written in the front matter. */
export const SkillParameter = z
  .object({
    name: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/, 'letters, digits and _, not starting with a digit'),
    type: z.enum(['string', 'number', 'integer', 'boolean']).default('string'),
    description: z.string().optional(),
    required: z.boolean().default(true),
  })
  .strict();
export type SkillParameter = z.infer<typeof SkillParameter>;

/**
 * The front matter of a SKILL.md. `parameters` may be a list of
 * `{ name, type, description, required }` or a map from name to the rest.
 * `type` says what the body is; when omitted, a body that is one fenced code
 * block (```sh, ```bash, ```python, ```node) or starts with `#!` is a script,
 * anything else a prompt template with `{{parameter}}` placeholders.
 */
export const SkillFrontMatter = z
  .object({
    name: z.string().regex(SKILL_NAME, 'lowercase letters, digits, _ and -, starting with a letter, at most 58'),
    description: z.string().min(1).max(1000),
    parameters: z
      .union([
        z.array(SkillParameter),
        z
          .record(z.string(), SkillParameter.omit({ name: true }).prefault({}))
          .transform((map) => Object.entries(map).map(([name, rest]) => SkillParameter.parse({ name, ...rest }))),
      ])
      .default([]),
    type: z.enum(['script', 'prompt']).optional(),
    /** Interpreter for a script body: sh, bash, python3 or node. */
    interpreter: z.enum(['sh', 'bash', 'python3', 'node']).optional(),
    /** An inactive skill stays on disk but is not offered as a tool. */
    active: z.boolean().default(true),
  })
  .strict();
export type SkillFrontMatter = z.infer<typeof SkillFrontMatter>;

/** Interpreters a script skill may use. */
export type SkillInterpreter = 'sh' | 'bash' | 'python3' | 'node';

/** A parsed SKILL.md. */
export interface SkillDefinition {
  name: string;
  description: string;
  parameters: SkillParameter[];
  active: boolean;
  kind: 'script' | 'prompt';
  /** The body as written (after the front matter). */
  body: string;
  /** For scripts: the code to run and its interpreter. */
  script?: { interpreter: SkillInterpreter; code: string };
}

const FENCE_LANGUAGES: Record<string, SkillInterpreter> = {
  sh: 'sh',
  shell: 'sh',
  bash: 'bash',
  python: 'python3',
  python3: 'python3',
  py: 'python3',
  js: 'node',
  javascript: 'node',
  node: 'node',
};

function scriptOf(body: string, front: SkillFrontMatter): SkillDefinition['script'] | undefined {
  const fenced = /^```([a-zA-Z0-9]*)\s*\n([\s\S]*?)\n```\s*$/.exec(body.trim());
  if (fenced) {
    const language = fenced[1].toLowerCase();
    const interpreter = front.interpreter ?? FENCE_LANGUAGES[language];
    if (!interpreter) return undefined;
    return { interpreter, code: fenced[2] };
  }
  const shebang = /^#!\s*(?:\/usr\/bin\/env\s+)?(?:\S*\/)?(sh|bash|python3?|node)\b/.exec(body.trimStart());
  if (shebang) return { interpreter: front.interpreter ?? FENCE_LANGUAGES[shebang[1]], code: body.trimStart() };
  if (front.type === 'script') return { interpreter: front.interpreter ?? 'sh', code: body };
  return undefined;
}

/**
 * Parses a SKILL.md: YAML front matter between `---` lines, then the body.
 * Stable API: the librarian's `create_skill` reuses it (with
 * {@link formatSkillMarkdown}) to validate what it writes.
 * @example
 * const skill = parseSkillMarkdown(fs.readFileSync('skills/greet/SKILL.md', 'utf8'), 'skills/greet/SKILL.md');
 * skill.kind; // 'prompt'
 */
export function parseSkillMarkdown(text: string, source = 'SKILL.md'): SkillDefinition {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  if (!match) throw new SkillParseError(`${source}: missing front matter (a block between --- lines at the top)`);
  let raw: unknown;
  try {
    raw = YAML.parse(match[1]);
  } catch (error) {
    throw new SkillParseError(`${source}: front matter is not valid YAML: ${errorMessage(error).split('\n')[0]}`);
  }
  const parsed = SkillFrontMatter.safeParse(raw ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(front matter)'}: ${i.message}`);
    throw new SkillParseError(`${source}: ${issues.join('; ')}`);
  }
  const front = parsed.data;
  const names = front.parameters.map((p) => p.name);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw new SkillParseError(`${source}: parameter "${duplicate}" is declared twice`);
  const body = match[2].replace(/^\r?\n/, '');
  if (body.trim().length === 0) throw new SkillParseError(`${source}: the body (script or prompt template) is empty`);
  const script = front.type === 'prompt' ? undefined : scriptOf(body, front);
  if (front.type === 'script' && !script) {
    throw new SkillParseError(
      `${source}: type is script but the body is not a runnable script (sh, bash, python3 or node)`,
    );
  }
  return {
    name: front.name,
    description: front.description,
    parameters: front.parameters,
    active: front.active,
    kind: script ? 'script' : 'prompt',
    body,
    ...(script ? { script } : {}),
  };
}

/** Writes a skill back as SKILL.md text that {@link parseSkillMarkdown} reads to the same definition. */
export function formatSkillMarkdown(
  skill: Omit<SkillDefinition, 'script' | 'kind'> & { kind?: 'script' | 'prompt' },
): string {
  const front: Record<string, unknown> = { name: skill.name, description: skill.description };
  if (skill.parameters.length > 0) front.parameters = skill.parameters;
  if (skill.kind) front.type = skill.kind;
  if (!skill.active) front.active = false;
  return `---\n${YAML.stringify(front).trimEnd()}\n---\n${skill.body.endsWith('\n') ? skill.body : `${skill.body}\n`}`;
}
