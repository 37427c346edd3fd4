import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
import type { Logger } from '../../log/logger';
import { applyEdit, FsEditArgs } from './edit';
import type { Workspace } from './workspace';

/** Options for {@link createFsTools}. */
export interface FsToolsOptions {
  workspace: Workspace;
  /** Bytes `fs_read` returns at most (`tools.fs.maxReadBytes`). */
  maxReadBytes: number;
  logger: Logger;
}

/** Entries `fs_list` returns at most, so a huge tree cannot flood the model. */
const MAX_LIST_ENTRIES = 1000;

function errnoMessage(error: unknown, shown: string): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') throw new ToolExecutionError(`"${shown}" does not exist`);
  if (code === 'EISDIR') throw new ToolExecutionError(`"${shown}" is a directory`);
  if (code === 'ENOTDIR') throw new ToolExecutionError(`"${shown}" is not a directory`);
  if (code === 'ENOTEMPTY') throw new ToolExecutionError(`"${shown}" is not empty (pass recursive: true)`);
  if (code === 'EEXIST') throw new ToolExecutionError(`"${shown}" already exists`);
  if (code === 'EACCES' || code === 'EPERM') throw new ToolExecutionError(`permission denied on "${shown}"`);
  throw error;
}

/** Reads at most `max` bytes of a file. */
function readCapped(file: string, max: number): { content: Buffer; size: number } {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, max));
    const read = fs.readSync(fd, buffer, 0, buffer.length, 0);
    return { content: buffer.subarray(0, read), size };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The operator's file tools, all confined to the workspace: `fs_read`,
 * `fs_write`, `fs_edit`, `fs_list`, `fs_mkdir`, `fs_delete`.
 * @example
 * const tools = createFsTools({ workspace: createWorkspace({ root, dataDir }), maxReadBytes: 1 << 20, logger });
 */
export function createFsTools(options: FsToolsOptions): AnyTool[] {
  const { workspace, maxReadBytes, logger } = options;

  const fsRead = defineTool({
    name: 'fs_read',
    description: `Reads a text file in the workspace (at most ${maxReadBytes} bytes; longer files come back truncated).`,
    parameters: z.object({ path: z.string().describe('File path relative to the workspace') }),
    execute: async ({ path: given }) => {
      const file = workspace.resolve(given);
      let read: { content: Buffer; size: number };
      try {
        read = readCapped(file, maxReadBytes);
      } catch (error) {
        errnoMessage(error, given);
      }
      if (read.content.includes(0)) throw new ToolExecutionError(`"${given}" is a binary file`);
      return {
        path: workspace.display(file),
        size: read.size,
        truncated: read.size > read.content.length,
        content: read.content.toString('utf8'),
      };
    },
  });

  const fsWrite = defineTool({
    name: 'fs_write',
    description: 'Writes (or with append: true, appends) text to a file in the workspace, creating parent folders.',
    parameters: z.object({
      path: z.string().describe('File path relative to the workspace'),
      content: z.string(),
      append: z.boolean().optional().describe('Append instead of replacing'),
    }),
    execute: async ({ path: given, content, append }) => {
      const file = workspace.resolve(given);
      if (file === workspace.root) throw new ToolExecutionError('cannot write to the workspace root itself');
      try {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        if (append) fs.appendFileSync(file, content);
        else fs.writeFileSync(file, content);
      } catch (error) {
        errnoMessage(error, given);
      }
      logger.debug('fs_write', { path: workspace.display(file), bytes: Buffer.byteLength(content) });
      return { path: workspace.display(file), bytes: Buffer.byteLength(content), appended: Boolean(append) };
    },
  });

  const fsEdit = defineTool({
    name: 'fs_edit',
    description:
      'Edits a text file in the workspace: replaces lines startLine..endLine (1-based, inclusive) with newText, ' +
      'or replaces the exact snippet oldText (which must occur exactly once) with newText.',
    parameters: FsEditArgs,
    execute: async (args) => {
      const file = workspace.resolve(args.path);
      let before: string;
      try {
        const read = readCapped(file, maxReadBytes);
        if (read.size > read.content.length) {
          throw new ToolExecutionError(`"${args.path}" is larger than ${maxReadBytes} bytes and cannot be edited`);
        }
        before = read.content.toString('utf8');
      } catch (error) {
        if (error instanceof ToolExecutionError) throw error;
        errnoMessage(error, args.path);
      }
      const { text, summary } = applyEdit(before, args);
      fs.writeFileSync(file, text);
      return { path: workspace.display(file), ...summary };
    },
  });

  const fsList = defineTool({
    name: 'fs_list',
    description: `Lists a folder of the workspace (recursive: true walks below it; at most ${MAX_LIST_ENTRIES} entries).`,
    parameters: z.object({
      path: z.string().optional().describe('Folder relative to the workspace; the root when omitted'),
      recursive: z.boolean().optional(),
    }),
    execute: async ({ path: given, recursive }) => {
      const dir = workspace.resolve(given ?? '.');
      const entries: { path: string; type: 'file' | 'directory' | 'symlink' | 'other'; size?: number }[] = [];
      let truncated = false;
      const walk = (folder: string): void => {
        let names: string[];
        try {
          names = fs.readdirSync(folder).sort();
        } catch (error) {
          errnoMessage(error, workspace.display(folder));
        }
        for (const name of names) {
          if (entries.length >= MAX_LIST_ENTRIES) {
            truncated = true;
            return;
          }
          const full = path.join(folder, name);
          try {
            workspace.resolve(full);
          } catch {
            continue; // the data directory, when the root was configured around it
          }
          const stat = fs.lstatSync(full);
          const type = stat.isSymbolicLink()
            ? 'symlink'
            : stat.isDirectory()
              ? 'directory'
              : stat.isFile()
                ? 'file'
                : 'other';
          entries.push({ path: workspace.display(full), type, ...(type === 'file' ? { size: stat.size } : {}) });
          if (recursive && type === 'directory') walk(full);
        }
      };
      walk(dir);
      return { path: workspace.display(dir), entries, truncated };
    },
  });

  const fsMkdir = defineTool({
    name: 'fs_mkdir',
    description: 'Creates a folder (and its parents) in the workspace.',
    parameters: z.object({ path: z.string().describe('Folder relative to the workspace') }),
    execute: async ({ path: given }) => {
      const dir = workspace.resolve(given);
      try {
        fs.mkdirSync(dir, { recursive: true });
      } catch (error) {
        errnoMessage(error, given);
      }
      return { path: workspace.display(dir), created: true };
    },
  });

  const fsDelete = defineTool({
    name: 'fs_delete',
    description: 'Deletes a file, or a folder (non-empty ones only with recursive: true), in the workspace.',
    parameters: z.object({ path: z.string(), recursive: z.boolean().optional() }),
    execute: async ({ path: given, recursive }) => {
      const target = workspace.resolve(given);
      if (target === workspace.root) throw new ToolExecutionError('refusing to delete the workspace root');
      if (workspace.holdsDataDir(target)) {
        throw new ToolExecutionError(`refusing to delete "${given}": it holds the node's data directory`);
      }
      try {
        const stat = fs.lstatSync(target);
        if (!stat.isDirectory()) fs.unlinkSync(target);
        else if (recursive) fs.rmSync(target, { recursive: true });
        else fs.rmdirSync(target);
      } catch (error) {
        errnoMessage(error, given);
      }
      logger.info('fs_delete', { path: workspace.display(target) });
      return { path: workspace.display(target), deleted: true };
    },
  });

  return [fsRead, fsWrite, fsEdit, fsList, fsMkdir, fsDelete];
}
