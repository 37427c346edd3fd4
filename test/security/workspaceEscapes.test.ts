import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { AnyTool } from '../../src/agent/tool';
import { fsFamily } from '../../src/tools/operator/family';
import { byName, callTool, tempDir } from '../tools/operator/context';
import { familyDeps } from '../tools/operator/deps';

/**
 * Ways out of the workspace through the real fs tools: links (dangling,
 * relative, chained, looping, in the middle of a path or at its end), hard
 * links to files outside (the vault's key), `..` spellings, special files,
 * and a second process swapping folders for links while the tools run.
 */

const TOOL_NAMES = ['fs_read', 'fs_write', 'fs_edit', 'fs_list', 'fs_mkdir', 'fs_delete'] as const;
type ToolName = (typeof TOOL_NAMES)[number];

describe('fs tools never leave the workspace', () => {
  let dir: string;
  let cleanup: () => void;
  let close: () => Promise<void>;
  let tools: Record<ToolName, AnyTool>;
  let ws: string;
  let outside: string;
  let secretFile: string;

  const call = (name: ToolName, args: Record<string, unknown>) => callTool(tools[name], args);
  /** Every file under `folder` with its content, to prove nothing outside changed. */
  const snapshot = (folder: string): Record<string, string> => {
    const files: Record<string, string> = {};
    for (const entry of fs.readdirSync(folder, { recursive: true, withFileTypes: true })) {
      const full = path.join(entry.parentPath, entry.name);
      files[path.relative(folder, full)] = entry.isFile()
        ? fs.readFileSync(full, 'utf8')
        : entry.isDirectory()
          ? '<dir>'
          : '<other>';
    }
    return files;
  };

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir('lango-ws-'));
    const deps = await familyDeps(path.join(dir, 'data'));
    close = deps.close;
    const family = await fsFamily.create(deps);
    tools = Object.fromEntries(TOOL_NAMES.map((name) => [name, byName(family.tools, name)])) as Record<
      ToolName,
      AnyTool
    >;
    ws = path.join(dir, 'data', 'workspace');
    outside = path.join(dir, 'outside');
    fs.mkdirSync(outside);
    secretFile = path.join(outside, 'secret.txt');
    fs.writeFileSync(secretFile, 'TOP-SECRET\n');
  });
  afterEach(async () => {
    await close();
    cleanup();
  });

  it('does not create a file through a dangling link that points outside', async () => {
    fs.symlinkSync(path.join(outside, 'created.txt'), path.join(ws, 'dangling'));
    fs.symlinkSync('../../outside/relative.txt', path.join(ws, 'dangling-relative'));
    for (const link of ['dangling', 'dangling-relative']) {
      for (const append of [false, true]) {
        await expect(call('fs_write', { path: link, content: 'x', append })).rejects.toThrow(
          `path "${link}" leads outside the workspace through a symbolic link`,
        );
      }
    }
    expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
  });

  it('follows a dangling link that points inside, creating its target there', async () => {
    fs.symlinkSync('notes/later.txt', path.join(ws, 'later'));
    await call('fs_write', { path: 'later', content: 'inside' });
    expect(fs.readFileSync(path.join(ws, 'notes', 'later.txt'), 'utf8')).toBe('inside');
  });

  it('refuses a regular file with a second hard link, for reading, writing, appending and editing', async () => {
    const keyFile = path.join(dir, 'data', 'master.key');
    fs.writeFileSync(keyFile, 'vault-master-key\n', { mode: 0o600 });
    fs.linkSync(keyFile, path.join(ws, 'key.txt'));
    fs.linkSync(secretFile, path.join(ws, 'secret.txt'));
    for (const file of ['key.txt', 'secret.txt']) {
      const refused = `"${file}" has 2 hard links; a file with more than one may lie outside the workspace`;
      await expect(call('fs_read', { path: file })).rejects.toThrow(refused);
      await expect(call('fs_write', { path: file, content: 'overwritten' })).rejects.toThrow(refused);
      await expect(call('fs_write', { path: file, content: 'more', append: true })).rejects.toThrow(refused);
      await expect(call('fs_edit', { path: file, oldText: 'SECRET', newText: 'x' })).rejects.toThrow(refused);
    }
    expect(fs.readFileSync(keyFile, 'utf8')).toBe('vault-master-key\n');
    expect(fs.readFileSync(secretFile, 'utf8')).toBe('TOP-SECRET\n');
    // Deleting the second name is harmless: it removes the link inside, never the file outside.
    await call('fs_delete', { path: 'secret.txt' });
    expect(fs.readFileSync(secretFile, 'utf8')).toBe('TOP-SECRET\n');
  });

  it('refuses every tool through a linked folder that points outside, absolute or relative', async () => {
    fs.symlinkSync(outside, path.join(ws, 'abs'));
    fs.symlinkSync('../../outside', path.join(ws, 'rel'));
    fs.mkdirSync(path.join(ws, 'deep', 'er'), { recursive: true });
    fs.symlinkSync('../../../../outside', path.join(ws, 'deep', 'er', 'up'));
    const before = snapshot(outside);
    for (const link of ['abs', 'rel', 'deep/er/up']) {
      const through = `${link}/secret.txt`;
      const refused = 'leads outside the workspace through a symbolic link';
      await expect(call('fs_read', { path: through })).rejects.toThrow(refused);
      await expect(call('fs_write', { path: `${link}/new.txt`, content: 'x' })).rejects.toThrow(refused);
      await expect(call('fs_write', { path: `${link}/sub/new.txt`, content: 'x' })).rejects.toThrow(refused);
      await expect(call('fs_edit', { path: through, oldText: 'TOP', newText: 'x' })).rejects.toThrow(refused);
      await expect(call('fs_list', { path: link })).rejects.toThrow(refused);
      await expect(call('fs_mkdir', { path: `${link}/made` })).rejects.toThrow(refused);
      await expect(call('fs_delete', { path: through })).rejects.toThrow(refused);
    }
    // `..` is applied as written, before any link: `abs/..` is the workspace root itself.
    await expect(call('fs_delete', { path: 'abs/..', recursive: true })).rejects.toThrow(
      'refusing to delete the workspace root',
    );
    expect(snapshot(outside)).toEqual(before);
  });

  it('follows chains of links while they stay inside and refuses the chain once it leaves', async () => {
    fs.mkdirSync(path.join(ws, 'real'));
    fs.writeFileSync(path.join(ws, 'real', 'f.txt'), 'inside\n');
    fs.symlinkSync('real', path.join(ws, 'hop1'));
    fs.symlinkSync('hop1', path.join(ws, 'hop2'));
    expect((await call('fs_read', { path: 'hop2/f.txt' })).content).toBe('inside\n');
    fs.symlinkSync('..', path.join(ws, 'real', 'parent'));
    expect((await call('fs_read', { path: 'hop2/parent/real/f.txt' })).content).toBe('inside\n');
    fs.symlinkSync('../..', path.join(ws, 'real', 'grandparent'));
    await expect(call('fs_read', { path: 'hop2/grandparent/outside/secret.txt' })).rejects.toThrow(
      'leads outside the workspace through a symbolic link',
    );
  });

  it('stops on link loops with a clear error', async () => {
    fs.symlinkSync('b', path.join(ws, 'a'));
    fs.symlinkSync('a', path.join(ws, 'b'));
    await expect(call('fs_read', { path: 'a' })).rejects.toThrow('path "a" goes through too many symbolic links');
    await expect(call('fs_write', { path: 'a/x', content: 'x' })).rejects.toThrow('too many symbolic links');
  });

  it.each([
    '..',
    '../outside/secret.txt',
    'a/../../outside/secret.txt',
    './../../outside/secret.txt',
    'a/b/../../../x',
    '/etc/passwd',
    '/',
  ])('refuses the path %s that leaves the workspace, in every tool', async (given) => {
    const refused = /outside the workspace/;
    await expect(call('fs_read', { path: given })).rejects.toThrow(refused);
    await expect(call('fs_write', { path: given, content: 'x' })).rejects.toThrow(refused);
    await expect(call('fs_edit', { path: given, oldText: 'a', newText: 'b' })).rejects.toThrow(refused);
    await expect(call('fs_list', { path: given })).rejects.toThrow(refused);
    await expect(call('fs_mkdir', { path: given })).rejects.toThrow(refused);
    await expect(call('fs_delete', { path: given, recursive: true })).rejects.toThrow(refused);
  });

  it('lists links as links and never walks into them', async () => {
    fs.symlinkSync(outside, path.join(ws, 'out'));
    fs.mkdirSync(path.join(ws, 'inner'));
    fs.writeFileSync(path.join(ws, 'inner', 'a.txt'), 'a');
    const listed = await call('fs_list', { recursive: true });
    expect(listed.entries).toEqual([
      { path: 'inner', type: 'directory' },
      { path: 'inner/a.txt', type: 'file', size: 1 },
      { path: 'out', type: 'symlink' },
    ]);
  });

  it('deletes a link itself, never what it points at, also inside a recursive delete', async () => {
    fs.symlinkSync(secretFile, path.join(ws, 'to-file'));
    fs.mkdirSync(path.join(ws, 'tree', 'sub'), { recursive: true });
    fs.symlinkSync(outside, path.join(ws, 'tree', 'sub', 'to-dir'));
    await call('fs_delete', { path: 'to-file' });
    await call('fs_delete', { path: 'tree', recursive: true });
    expect(fs.existsSync(path.join(ws, 'tree'))).toBe(false);
    expect(fs.existsSync(path.join(ws, 'to-file'))).toBe(false);
    expect(snapshot(outside)).toEqual({ 'secret.txt': 'TOP-SECRET\n' });
  });

  it('refuses special files without blocking on them', async () => {
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [path.join(ws, 'pipe')]);
    await expect(call('fs_read', { path: 'pipe' })).rejects.toThrow('"pipe" is not a regular file');
    await expect(call('fs_write', { path: 'pipe', content: 'x' })).rejects.toThrow('"pipe" is not a regular file');
    await expect(call('fs_edit', { path: 'pipe', oldText: 'a', newText: 'b' })).rejects.toThrow(
      '"pipe" is not a regular file',
    );
  });

  describe('while another process swaps a folder for a link to the outside', () => {
    let swapper: ChildProcess | undefined;
    afterEach(async () => {
      if (swapper && swapper.exitCode === null) {
        const exited = new Promise((resolve) => swapper?.once('exit', resolve));
        swapper.kill('SIGKILL');
        await exited;
      }
      swapper = undefined;
    });

    /** Starts a process that keeps renaming `ws/<name>` between a real entry and a link to `target`. */
    async function startSwapping(name: string, makeReal: string, target: string): Promise<void> {
      const script = `
        const fs = require('fs'), path = require('path');
        const [ws, name, target] = process.argv.slice(1);
        const live = path.join(ws, name), real = path.join(ws, '.real-' + name), link = path.join(ws, '.link-' + name);
        fs.symlinkSync(target, link);
        process.stdout.write('ready\\n');
        for (;;) {
          try { fs.renameSync(live, real); fs.renameSync(link, live); fs.renameSync(live, link); fs.renameSync(real, live); } catch {}
        }`;
      if (makeReal === 'dir') fs.mkdirSync(path.join(ws, name));
      else fs.writeFileSync(path.join(ws, name), 'inside\n');
      swapper = spawn(process.execPath, ['-e', script, ws, name, target], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve, reject) => {
        swapper?.stdout?.once('data', () => resolve());
        swapper?.once('exit', (code) => reject(new Error(`swapper exited ${code}`)));
      });
    }

    it('never writes, reads, lists or deletes outside through the swapped folder', async () => {
      await startSwapping('swap', 'dir', outside);
      const before = snapshot(outside);
      const outcomes = { ok: 0, refused: 0 };
      const tally = async (run: () => Promise<unknown>, check?: (result: any) => void) => {
        try {
          const result = await run();
          check?.(result);
          outcomes.ok += 1;
        } catch (error) {
          if (!(error instanceof Error) || /TOP-SECRET|expect/.test(error.message)) throw error;
          outcomes.refused += 1;
        }
      };
      for (let i = 0; i < 300; i += 1) {
        await tally(() => call('fs_write', { path: `swap/w${i}.txt`, content: 'x' }));
        await tally(() => call('fs_write', { path: 'swap/clobber.txt', content: 'clobbered' }));
        await tally(
          () => call('fs_read', { path: 'swap/secret.txt' }),
          (r) => expect(r.content).not.toContain('TOP-SECRET'),
        );
        await tally(
          () => call('fs_list', { path: 'swap' }),
          (r) => expect(JSON.stringify(r)).not.toContain('secret.txt'),
        );
        await tally(() => call('fs_delete', { path: 'swap/secret.txt' }));
        await tally(() => call('fs_mkdir', { path: `swap/d${i}` }));
      }
      expect(snapshot(outside)).toEqual(before);
      // Both sides of the race were hit: some calls found the real folder, some the link.
      expect(outcomes.ok).toBeGreaterThan(0);
      expect(outcomes.refused).toBeGreaterThan(0);
    });

    it('never writes or reads the outside file through a file swapped for a link', async () => {
      await startSwapping('file.txt', 'file', secretFile);
      const outcomes = { ok: 0, refused: 0 };
      for (let i = 0; i < 400; i += 1) {
        for (const run of [
          () => call('fs_write', { path: 'file.txt', content: 'clobbered\n' }),
          () => call('fs_write', { path: 'file.txt', content: 'more\n', append: true }),
          () => call('fs_edit', { path: 'file.txt', startLine: 1, newText: 'edited' }),
          async () => expect((await call('fs_read', { path: 'file.txt' })).content).not.toContain('TOP-SECRET'),
        ]) {
          try {
            await run();
            outcomes.ok += 1;
          } catch (error) {
            if (!(error instanceof Error) || /expect/.test(error.message)) throw error;
            outcomes.refused += 1;
          }
        }
      }
      expect(fs.readFileSync(secretFile, 'utf8')).toBe('TOP-SECRET\n');
      expect(outcomes.ok).toBeGreaterThan(0);
      expect(outcomes.refused).toBeGreaterThan(0);
    });
  });
});

describe('fs tools with the root around the data directory', () => {
  it('refuses the data directory by identity, even renamed', async () => {
    const { dir, cleanup } = tempDir('lango-ws-fence-');
    const dataDir = path.join(dir, '.lango');
    const deps = await familyDeps(dataDir, { tools: { fs: { root: dir } } });
    try {
      const tools = (await fsFamily.create(deps)).tools;
      fs.writeFileSync(path.join(dataDir, 'master.key'), 'k');
      const renamed = path.join(dir, 'innocent');
      fs.renameSync(dataDir, renamed);
      try {
        await expect(callTool(byName(tools, 'fs_read'), { path: 'innocent/master.key' })).rejects.toThrow(
          `path "innocent/master.key" is inside the node's data directory, which is off limits`,
        );
        await expect(callTool(byName(tools, 'fs_list'), { path: 'innocent' })).rejects.toThrow(
          "inside the node's data directory",
        );
        const listed = await callTool(byName(tools, 'fs_list'), { recursive: true });
        expect(listed.entries).toEqual([]);
      } finally {
        fs.renameSync(renamed, dataDir);
      }
    } finally {
      await deps.close();
      cleanup();
    }
  });
});
