import fs from 'node:fs';
import path from 'node:path';
import { createMemoryLogger } from '../../../src/log/logger';
import { createLibrarian } from '../../../src/tools/librarian/family';
import { loadSkills } from '../../../src/tools/operator/skills';
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
      stores: node.stores,
      logger: createMemoryLogger(),
    }).tools;

  it('writes a SKILL.md the operator loads, under dataDir/skills, and lists it', async () => {
    const t = tools();
    const created = await callTool(t, 'create_skill', {
      name: 'disk-usage',
      description: 'Reports disk usage of a folder.',
      parameters: [{ name: 'folder', type: 'string', description: 'folder to measure' }],
      body: '```sh\ndu -sh "$folder"\n```',
    });
    const file = path.join(node.dataDir, 'skills', 'disk-usage', 'SKILL.md');
    expect(created).toEqual({ created: 'disk-usage', kind: 'script', file, replaced: false });
    expect(fs.readFileSync(file, 'utf8')).toMatch(
      /^---\nname: disk-usage\ndescription: Reports disk usage of a folder.\n/,
    );

    // The operator's own loader reads it back as a runnable script skill.
    const scan = loadSkills(path.join(node.dataDir, 'skills'));
    expect(scan.errors).toEqual([]);
    expect(scan.skills[0]).toMatchObject({ name: 'disk-usage', kind: 'script', script: { interpreter: 'sh' } });

    const listed = await callTool(t, 'list_skills', {});
    expect(listed).toEqual({
      skills: [
        {
          name: 'disk-usage',
          description: 'Reports disk usage of a folder.',
          kind: 'script',
          active: true,
          parameters: [{ name: 'folder', type: 'string', description: 'folder to measure', required: true }],
        },
      ],
    });
  });

  it('refuses to replace an existing skill unless overwrite is set', async () => {
    const t = tools();
    const skill = { name: 'greet', description: 'Greets someone.', body: 'Say hello to {{name}} warmly.' };
    const first = await callTool(t, 'create_skill', skill);
    expect(first.kind).toBe('prompt');
    await expect(callTool(t, 'create_skill', { ...skill, body: 'changed' })).rejects.toThrow(
      /already exists; pass overwrite: true/,
    );
    expect(fs.readFileSync(first.file, 'utf8')).toContain('Say hello to {{name}} warmly.');
    const replaced = await callTool(t, 'create_skill', { ...skill, body: 'Say hi to {{name}}.', overwrite: true });
    expect(replaced.replaced).toBe(true);
    expect(fs.readFileSync(replaced.file, 'utf8')).toContain('Say hi to {{name}}.');
  });

  it('rejects invalid skills before writing and reports unusable skill files found on disk', async () => {
    const t = tools();
    const create = t.find((x) => x.name === 'create_skill')!;
    expect(create.parameters.safeParse({ name: '../escape', description: 'x', body: 'y' }).success).toBe(false);
    expect(create.parameters.safeParse({ name: 'Upper', description: 'x', body: 'y' }).success).toBe(false);
    await expect(
      callTool(t, 'create_skill', {
        name: 'bad-script',
        description: 'x',
        type: 'script',
        body: '```cobol\nDISPLAY 1\n```',
      }),
    ).rejects.toThrow(/not a runnable script/);
    expect(fs.existsSync(path.join(node.dataDir, 'skills', 'bad-script'))).toBe(false);

    fs.mkdirSync(path.join(node.dataDir, 'skills', 'broken'), { recursive: true });
    fs.writeFileSync(path.join(node.dataDir, 'skills', 'broken', 'SKILL.md'), '---\nname: broken\n---\nbody\n');
    const listed = await callTool(t, 'list_skills', {});
    expect(listed.skills).toEqual([]);
    expect(listed.invalid).toEqual([{ name: 'broken', error: expect.stringMatching(/description/) }]);
  });
});
