import fs from 'node:fs';
import path from 'node:path';
import { fsFamily } from '../../../src/tools/operator/family';
import type { AnyTool } from '../../../src/agent/tool';
import { byName, callTool, tempDir } from './context';
import { familyDeps } from './deps';

describe('fs tools confined to the workspace', () => {
  let dir: string;
  let cleanup: () => void;
  let tools: AnyTool[];
  let ws: string;
  let close: () => void;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    const deps = await familyDeps(path.join(dir, 'data'), { tools: { fs: { maxReadBytes: 64 } } });
    close = deps.close;
    tools = (await fsFamily.create(deps)).tools;
    ws = path.join(dir, 'data', 'workspace');
  });
  afterEach(async () => {
    close();
    cleanup();
  });

  it('creates the workspace under dataDir/workspace and writes, reads and lists real files there', async () => {
    const written = await callTool(byName(tools, 'fs_write'), { path: 'notes/a.txt', content: 'hello\n' });
    expect(written).toMatchObject({ path: 'notes/a.txt', bytes: 6 });
    expect(fs.readFileSync(path.join(ws, 'notes', 'a.txt'), 'utf8')).toBe('hello\n');
    await callTool(byName(tools, 'fs_write'), { path: 'notes/a.txt', content: 'again\n', append: true });
    const read = await callTool(byName(tools, 'fs_read'), { path: 'notes/a.txt' });
    expect(read).toEqual({ path: 'notes/a.txt', size: 12, truncated: false, content: 'hello\nagain\n' });
    const listed = await callTool(byName(tools, 'fs_list'), { recursive: true });
    expect(listed.entries).toEqual([
      { path: 'notes', type: 'directory' },
      { path: path.join('notes', 'a.txt'), type: 'file', size: 12 },
    ]);
  });

  it('caps reads at tools.fs.maxReadBytes and says the content was truncated', async () => {
    fs.writeFileSync(path.join(ws, 'big.txt'), 'x'.repeat(200));
    const read = await callTool(byName(tools, 'fs_read'), { path: 'big.txt' });
    expect(read).toMatchObject({ size: 200, truncated: true });
    expect(read.content).toHaveLength(64);
  });

  it('refuses to read a binary file and names a missing one', async () => {
    fs.writeFileSync(path.join(ws, 'bin'), Buffer.from([1, 0, 2]));
    await expect(callTool(byName(tools, 'fs_read'), { path: 'bin' })).rejects.toThrow('"bin" is a binary file');
    await expect(callTool(byName(tools, 'fs_read'), { path: 'nope.txt' })).rejects.toThrow('"nope.txt" does not exist');
  });

  it('refuses .. that leaves the workspace, for reads, writes and listings', async () => {
    fs.writeFileSync(path.join(dir, 'outside.txt'), 'secret');
    await expect(callTool(byName(tools, 'fs_read'), { path: '../../outside.txt' })).rejects.toThrow(
      'outside the workspace',
    );
    await expect(callTool(byName(tools, 'fs_write'), { path: '../escape.txt', content: 'x' })).rejects.toThrow(
      'outside the workspace',
    );
    expect(fs.existsSync(path.join(dir, 'data', 'escape.txt'))).toBe(false);
    await expect(callTool(byName(tools, 'fs_list'), { path: '..' })).rejects.toThrow('outside the workspace');
  });

  it('allows .. that stays inside the workspace', async () => {
    await callTool(byName(tools, 'fs_write'), { path: 'a/../b.txt', content: 'ok' });
    expect(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8')).toBe('ok');
  });

  it('refuses absolute paths outside the workspace but accepts absolute paths inside it', async () => {
    await expect(callTool(byName(tools, 'fs_read'), { path: '/etc/passwd' })).rejects.toThrow('outside the workspace');
    await callTool(byName(tools, 'fs_write'), { path: path.join(ws, 'abs.txt'), content: 'in' });
    expect((await callTool(byName(tools, 'fs_read'), { path: 'abs.txt' })).content).toBe('in');
  });

  it('refuses symlinks that lead out of the workspace, for reads and for writes through a linked folder', async () => {
    fs.writeFileSync(path.join(dir, 'outside.txt'), 'secret');
    fs.symlinkSync(path.join(dir, 'outside.txt'), path.join(ws, 'link.txt'));
    fs.symlinkSync(dir, path.join(ws, 'linkdir'));
    await expect(callTool(byName(tools, 'fs_read'), { path: 'link.txt' })).rejects.toThrow('symbolic link');
    await expect(callTool(byName(tools, 'fs_write'), { path: 'linkdir/new.txt', content: 'x' })).rejects.toThrow(
      'symbolic link',
    );
    expect(fs.existsSync(path.join(dir, 'new.txt'))).toBe(false);
    await expect(callTool(byName(tools, 'fs_delete'), { path: 'linkdir/outside.txt' })).rejects.toThrow(
      'symbolic link',
    );
    expect(fs.existsSync(path.join(dir, 'outside.txt'))).toBe(true);
  });

  it('follows symlinks that stay inside the workspace', async () => {
    fs.writeFileSync(path.join(ws, 'real.txt'), 'inside');
    fs.symlinkSync(path.join(ws, 'real.txt'), path.join(ws, 'alias.txt'));
    expect((await callTool(byName(tools, 'fs_read'), { path: 'alias.txt' })).content).toBe('inside');
  });
});

describe('fs tools with the root configured around the data directory', () => {
  it('never reaches the data directory, even though it lies inside the root', async () => {
    const { dir, cleanup } = tempDir();
    const dataDir = path.join(dir, '.lango');
    const deps = await familyDeps(dataDir, { tools: { fs: { root: dir } } });
    try {
      const tools = (await fsFamily.create(deps)).tools;
      fs.writeFileSync(path.join(dataDir, 'master.key'), 'k');
      fs.writeFileSync(path.join(dir, 'readme.md'), 'hi');
      await expect(callTool(byName(tools, 'fs_read'), { path: '.lango/master.key' })).rejects.toThrow(
        "inside the node's data directory",
      );
      await expect(callTool(byName(tools, 'fs_write'), { path: '.lango/x', content: 'x' })).rejects.toThrow(
        "inside the node's data directory",
      );
      await expect(callTool(byName(tools, 'fs_delete'), { path: '.lango', recursive: true })).rejects.toThrow(
        "inside the node's data directory",
      );
      const listed = await callTool(byName(tools, 'fs_list'), { recursive: true });
      expect(listed.entries.map((e: { path: string }) => e.path)).toEqual(['readme.md']);
      fs.symlinkSync(dataDir, path.join(dir, 'sneaky'));
      await expect(callTool(byName(tools, 'fs_read'), { path: 'sneaky/master.key' })).rejects.toThrow(
        "inside the node's data directory",
      );
    } finally {
      await deps.close();
      cleanup();
    }
  });

  it('refuses to delete a folder that holds the data directory', async () => {
    const { dir, cleanup } = tempDir();
    const dataDir = path.join(dir, 'node', '.lango');
    const deps = await familyDeps(dataDir, { tools: { fs: { root: dir } } });
    try {
      const tools = (await fsFamily.create(deps)).tools;
      await expect(callTool(byName(tools, 'fs_delete'), { path: 'node', recursive: true })).rejects.toThrow(
        "holds the node's data directory",
      );
      expect(fs.existsSync(dataDir)).toBe(true);
    } finally {
      await deps.close();
      cleanup();
    }
  });

  it('marks the family broken when the root is the data directory itself', async () => {
    const { dir, cleanup } = tempDir();
    const deps = await familyDeps(dir, { tools: { fs: { root: dir } } });
    try {
      expect(() => fsFamily.create(deps)).toThrow('must not be the data directory itself');
    } finally {
      await deps.close();
      cleanup();
    }
  });
});
