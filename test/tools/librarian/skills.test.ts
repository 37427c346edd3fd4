import fs from 'node:fs';
import path from 'node:path';
import { createMemoryLogger } from '../../../src/log/logger';
import { createLibrarian } from '../../../src/tools/librarian/family';
import { parseSkillMarkdown } from '../../../src/tools/librarian/skills';
import { callTool, configOf, tempNode } from '../../support/librarianHarness';

describe('librarian skills', () => {
  let node: ReturnType<typeof tempNode>;
  beforeEach(() => {
    node = tempNode('skills');
  });
  afterEach(() => node.cleanup());

  const tools = () =>
    createLibrarian({
      config: configOf({ embedding: { provider: 'none' } }),
      dataDir: node.dataDir,
      db: node.db,
      logger: createMemoryLogger(),
      clock: () => new Date(),
    }).tools;

  it('writes a validated SKILL.md under dataDir/skills and lists it', async () => {
    const t = tools();
    const created = await callTool(t, 'create_skill', {
      name: 'disk-usage',
      description: 'Reports disk usage of a folder.',
      type: 'script',
      parameters: { folder: { type: 'string', description: 'folder to measure', required: true } },
      body: 'du -sh "$folder"',
    });
    const file = path.join(node.dataDir, 'skills', 'disk-usage', 'SKILL.md');
    expect(created).toEqual({ created: 'disk-usage', file, replaced: false });
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toMatch(/^---\nname: disk-usage\ndescription: Reports disk usage of a folder.\ntype: script\n/);
    expect(parseSkillMarkdown(text, file)).toMatchObject({
      body: 'du -sh "$folder"',
      parameters: { folder: { required: true } },
    });

    const listed = await callTool(t, 'list_skills', {});
    expect(listed).toEqual({
      skills: [
        {
          name: 'disk-usage',
          description: 'Reports disk usage of a folder.',
          type: 'script',
          parameters: { folder: { type: 'string', description: 'folder to measure', required: true } },
        },
      ],
    });
  });

  it('refuses to replace an existing skill unless overwrite is set', async () => {
    const t = tools();
    const skill = { name: 'greet', description: 'Greets someone.', body: 'Say hello to {{name}} warmly.' };
    await callTool(t, 'create_skill', skill);
    await expect(callTool(t, 'create_skill', { ...skill, body: 'changed' })).rejects.toThrow(
      /already exists; pass overwrite: true/,
    );
    const replaced = await callTool(t, 'create_skill', { ...skill, body: 'Say hi to {{name}}.', overwrite: true });
    expect(replaced.replaced).toBe(true);
    expect(fs.readFileSync(replaced.file, 'utf8')).toContain('Say hi to {{name}}.');
  });

  it('rejects invalid names and reports invalid skill files found on disk', async () => {
    const t = tools();
    const create = t.find((x) => x.name === 'create_skill')!;
    expect(create.parameters.safeParse({ name: '../escape', description: 'x', body: 'y' }).success).toBe(false);
    expect(create.parameters.safeParse({ name: 'Upper', description: 'x', body: 'y' }).success).toBe(false);
    fs.mkdirSync(path.join(node.dataDir, 'skills', 'broken'), { recursive: true });
    fs.writeFileSync(path.join(node.dataDir, 'skills', 'broken', 'SKILL.md'), '---\nname: broken\n---\n');
    const listed = await callTool(t, 'list_skills', {});
    expect(listed.skills).toEqual([]);
    expect(listed.invalid).toEqual([{ name: 'broken', error: expect.stringMatching(/description/) }]);
  });
});
