import fs from 'node:fs';
import path from 'node:path';
import type { AnyTool } from '../../../src/agent/tool';
import { fsFamily } from '../../../src/tools/operator/family';
import { byName, callTool, tempDir } from './context';
import { familyDeps } from './deps';

describe('fs_edit, fs_mkdir, fs_delete', () => {
  let dir: string;
  let cleanup: () => void;
  let close: () => void;
  let tools: AnyTool[];
  let ws: string;
  const file = () => path.join(ws, 'f.txt');

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    const deps = await familyDeps(dir);
    close = deps.close;
    tools = (await fsFamily.create(deps)).tools;
    ws = path.join(dir, 'workspace');
    fs.writeFileSync(file(), 'one\ntwo\nthree\n');
  });
  afterEach(async () => {
    close();
    cleanup();
  });

  it('replaces a line range', async () => {
    const result = await callTool(byName(tools, 'fs_edit'), {
      path: 'f.txt',
      startLine: 2,
      endLine: 3,
      newText: 'TWO\nTHREE\nFOUR',
    });
    expect(result).toMatchObject({ mode: 'lines', replacedLines: [2, 3], lines: 4 });
    expect(fs.readFileSync(file(), 'utf8')).toBe('one\nTWO\nTHREE\nFOUR\n');
  });

  it('deletes a line with empty newText and appends after the last line', async () => {
    await callTool(byName(tools, 'fs_edit'), { path: 'f.txt', startLine: 1, newText: '' });
    await callTool(byName(tools, 'fs_edit'), { path: 'f.txt', startLine: 3, newText: 'four' });
    expect(fs.readFileSync(file(), 'utf8')).toBe('two\nthree\nfour\n');
  });

  it('replaces an exact snippet that occurs once', async () => {
    await callTool(byName(tools, 'fs_edit'), { path: 'f.txt', oldText: 'two\nthr', newText: '2\n3' });
    expect(fs.readFileSync(file(), 'utf8')).toBe('one\n2\n3ee\n');
  });

  it('refuses ambiguous, missing or contradictory edits and leaves the file alone', async () => {
    fs.writeFileSync(file(), 'a\na\n');
    const edit = byName(tools, 'fs_edit');
    await expect(callTool(edit, { path: 'f.txt', oldText: 'a', newText: 'b' })).rejects.toThrow('more than once');
    await expect(callTool(edit, { path: 'f.txt', oldText: 'zzz', newText: 'b' })).rejects.toThrow('not found');
    await expect(callTool(edit, { path: 'f.txt', oldText: 'a', startLine: 1, newText: 'b' })).rejects.toThrow(
      'not both',
    );
    await expect(callTool(edit, { path: 'f.txt', newText: 'b' })).rejects.toThrow('not neither');
    await expect(callTool(edit, { path: 'f.txt', startLine: 5, endLine: 6, newText: 'b' })).rejects.toThrow(
      'outside the file',
    );
    await expect(callTool(edit, { path: 'f.txt', startLine: 2, endLine: 1, newText: 'b' })).rejects.toThrow(
      'before startLine',
    );
    await expect(callTool(edit, { path: '../x', startLine: 1, newText: 'b' })).rejects.toThrow('outside the workspace');
    expect(fs.readFileSync(file(), 'utf8')).toBe('a\na\n');
  });

  it('makes nested folders and deletes files and folders, non-empty ones only when recursive', async () => {
    await callTool(byName(tools, 'fs_mkdir'), { path: 'a/b/c' });
    expect(fs.statSync(path.join(ws, 'a', 'b', 'c')).isDirectory()).toBe(true);
    fs.writeFileSync(path.join(ws, 'a', 'b', 'c', 'x.txt'), 'x');
    const del = byName(tools, 'fs_delete');
    await expect(callTool(del, { path: 'a' })).rejects.toThrow('"a" is not empty');
    await callTool(del, { path: 'a/b/c/x.txt' });
    expect(fs.existsSync(path.join(ws, 'a', 'b', 'c', 'x.txt'))).toBe(false);
    await callTool(del, { path: 'a', recursive: true });
    expect(fs.existsSync(path.join(ws, 'a'))).toBe(false);
    await expect(callTool(del, { path: '.', recursive: true })).rejects.toThrow('workspace root');
    await expect(callTool(del, { path: 'missing' })).rejects.toThrow('"missing" does not exist');
    await expect(callTool(byName(tools, 'fs_mkdir'), { path: '../outside' })).rejects.toThrow('outside the workspace');
    expect(fs.existsSync(path.join(dir, 'outside'))).toBe(false);
  });
});
