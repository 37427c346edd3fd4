import fs from 'node:fs';
import path from 'node:path';
import { ApprovalRequired } from '../../../src/agent/tool';
import { skillsFamily } from '../../../src/tools/operator/family';
import { formatSkillMarkdown, parseSkillMarkdown, SkillParseError } from '../../../src/tools/operator/skills';
import { secretsFamily } from '../../../src/tools/vault/family';
import { byName, callTool, tempDir, toolContext, itWhenSandboxed } from './context';
import { familyDeps } from './deps';

function writeSkill(dataDir: string, folder: string, text: string): void {
  fs.mkdirSync(path.join(dataDir, 'skills', folder), { recursive: true });
  fs.writeFileSync(path.join(dataDir, 'skills', folder, 'SKILL.md'), text);
}

const GREET = `---
name: greet
description: Drafts a greeting
parameters:
  who: { description: Who to greet }
  tone: { required: false }
---
Write a {{tone}} greeting for {{who}}.
`;

const COUNT = `---
name: count-lines
description: Counts the lines of a workspace file
parameters:
  - name: file
    type: string
---
\`\`\`sh
wc -l < "$SKILL_ARG_FILE" | tr -d ' '
\`\`\`
`;

const PY = `---
name: add
description: Adds two numbers
parameters:
  a: { type: number }
  b: { type: number }
---
#!/usr/bin/env python3
import json, os
args = json.loads(os.environ["SKILL_ARGS"])
print(args["a"] + args["b"])
`;

describe('SKILL.md parser', () => {
  it('reads front matter (map or list parameters) and tells scripts from prompt templates', () => {
    const greet = parseSkillMarkdown(GREET);
    expect(greet).toMatchObject({ name: 'greet', kind: 'prompt', active: true });
    expect(greet.parameters).toEqual([
      { name: 'who', type: 'string', description: 'Who to greet', required: true },
      { name: 'tone', type: 'string', required: false },
    ]);
    expect(parseSkillMarkdown(COUNT).script).toEqual({
      interpreter: 'sh',
      code: `wc -l < "$SKILL_ARG_FILE" | tr -d ' '`,
    });
    expect(parseSkillMarkdown(PY).script?.interpreter).toBe('python3');
  });

  it('round-trips through formatSkillMarkdown', () => {
    const greet = parseSkillMarkdown(GREET);
    expect(parseSkillMarkdown(formatSkillMarkdown(greet))).toEqual(greet);
    const count = parseSkillMarkdown(COUNT);
    expect(parseSkillMarkdown(formatSkillMarkdown(count))).toEqual(count);
  });

  it('names the file and the problem for bad skills', () => {
    expect(() => parseSkillMarkdown('no front matter', 'x/SKILL.md')).toThrow('x/SKILL.md: missing front matter');
    expect(() => parseSkillMarkdown('---\nname: Bad Name\ndescription: d\n---\nbody')).toThrow(SkillParseError);
    expect(() => parseSkillMarkdown('---\nname: ok\n---\nbody')).toThrow('description');
    expect(() => parseSkillMarkdown('---\nname: ok\ndescription: d\n---\n\n')).toThrow('body');
    expect(() => parseSkillMarkdown('---\nname: ok\ndescription: d\nbogus: 1\n---\nx')).toThrow('bogus');
  });
});

describe('skill_<name> tools', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    writeSkill(dir, 'greet', GREET);
    writeSkill(dir, 'count', COUNT);
    writeSkill(dir, 'add', PY);
    writeSkill(
      dir,
      'off',
      GREET.replace('name: greet', 'name: off').replace('---\nWrite', 'active: false\n---\nWrite'),
    );
    writeSkill(dir, 'broken', '---\nname: [\n---\nx');
  });
  afterEach(() => cleanup());

  it('offers each active skill as a tool and reports the broken ones', async () => {
    const deps = await familyDeps(dir);
    try {
      const { tools } = await skillsFamily.create(deps);
      expect(tools.map((t) => t.name).sort()).toEqual(['skill_add', 'skill_count-lines', 'skill_greet']);
      const warning = deps.logger.records.find((r) => r.message === 'skill skipped');
      expect(warning?.meta.reason).toMatch(/broken.SKILL\.md: front matter is not valid YAML/);
      const rendered = await callTool(byName(tools, 'skill_greet'), { who: 'Ada', tone: 'warm' });
      expect(rendered).toEqual({ skill: 'greet', kind: 'prompt', instructions: 'Write a warm greeting for Ada.\n' });
      await expect(callTool(byName(tools, 'skill_greet'), {})).rejects.toThrow('bad arguments');
    } finally {
      await deps.close();
    }
  });

  it('runs script skills in the workspace with arguments in the environment', async () => {
    const deps = await familyDeps(dir);
    try {
      const { tools } = await skillsFamily.create(deps);
      fs.writeFileSync(path.join(dir, 'workspace', 'three.txt'), 'a\nb\nc\n');
      const counted = await callTool(byName(tools, 'skill_count-lines'), { file: 'three.txt' });
      expect(counted).toMatchObject({ skill: 'count-lines', kind: 'script', exitCode: 0, stdout: '3\n' });
      const added = await callTool(byName(tools, 'skill_add'), { a: 2, b: 40 });
      expect(added).toMatchObject({ exitCode: 0, stdout: '42\n' });
    } finally {
      await deps.close();
    }
  });

  it('passes a secret reference argument to the script as its value and masks it in the output', async () => {
    const deps = await familyDeps(dir);
    try {
      await callTool(byName((await secretsFamily.create(deps)).tools, 'secrets_store'), {
        name: 'TOKEN',
        value: 'skill-secret-4711',
      });
      writeSkill(
        dir,
        'echo',
        '---\nname: echo\ndescription: echoes\nparameters:\n  text: {}\n---\n```sh\nprintf "%s" "$SKILL_ARG_TEXT" > got.txt; echo "$SKILL_ARG_TEXT"\n```\n',
      );
      const { tools } = await skillsFamily.create(deps);
      const result = await callTool(byName(tools, 'skill_echo'), { text: '{{secret:TOKEN}}' });
      expect(result.stdout).toBe('[REDACTED]\n');
      expect(fs.readFileSync(path.join(dir, 'workspace', 'got.txt'), 'utf8')).toBe('skill-secret-4711');
      expect(JSON.stringify(deps.logger.records)).not.toContain('skill-secret-4711');
    } finally {
      await deps.close();
    }
  });

  itWhenSandboxed('holds script skills to the exec policy, prompt skills not', async () => {
    const deps = await familyDeps(dir, { tools: { exec: { policy: 'ask', allow: ['skill_add'] } } });
    try {
      const { tools } = await skillsFamily.create(deps);
      expect((await callTool(byName(tools, 'skill_add'), { a: 1, b: 1 })).stdout).toBe('2\n');
      await expect(callTool(byName(tools, 'skill_count-lines'), { file: 'x' })).rejects.toBeInstanceOf(
        ApprovalRequired,
      );
      fs.writeFileSync(path.join(dir, 'workspace', 'x'), 'l\n');
      const approved = await callTool(
        byName(tools, 'skill_count-lines'),
        { file: 'x' },
        toolContext({ approved: true }),
      );
      expect(approved.stdout).toBe('1\n');
      expect((await callTool(byName(tools, 'skill_greet'), { who: 'Bo' })).kind).toBe('prompt');
    } finally {
      await deps.close();
    }
  });

  it('is off when tools.skills.enabled is false', async () => {
    const deps = await familyDeps(dir, { tools: { skills: { enabled: false } } });
    try {
      expect(skillsFamily.enabled(deps.config)).toBe(false);
    } finally {
      await deps.close();
    }
  });
});
