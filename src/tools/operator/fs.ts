import fs from 'node:fs';
import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
import type { Logger } from '../../log/logger';
import { applyEdit, FsEditArgs } from './edit';
import type { OpenedFile, Workspace } from './workspace';

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
  if (error instanceof ToolExecutionError) throw error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') throw new ToolExecutionError(`"${shown}" does not exist`);
  if (code === 'EISDIR') throw new ToolExecutionError(`"${shown}" is a directory`);
  if (code === 'ENOTDIR') throw new ToolExecutionError(`"${shown}" is not a directory`);
  if (code === 'ENOTEMPTY') throw new ToolExecutionError(`"${shown}" is not empty (pass recursive: true)`);
  if (code === 'EEXIST') throw new ToolExecutionError(`"${shown}" already exists`);
  if (code === 'EACCES' || code === 'EPERM') throw new ToolExecutionError(`permission denied on "${shown}"`);
  if (code === 'ELOOP') throw new ToolExecutionError(`"${shown}" was replaced by a symbolic link while being opened`);
  if (code === 'ENXIO') throw new ToolExecutionError(`"${shown}" is not a regular file`);
  throw error;
}

/** Runs a workspace operation, turning file-system errors into messages that name the path. */
function attempt<T>(shown: string, operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    errnoMessage(error, shown);
  }
}

/** Reads at most `max` bytes of an opened file. */
function readCapped(file: OpenedFile, max: number): Buffer {
  const buffer = Buffer.alloc(Math.min(file.size, max));
  const read = fs.readSync(file.fd, buffer, 0, buffer.length, 0);
  return buffer.subarray(0, read);
}

/** Writes all of `data` to `fd` (at `position`, or at the end for an append). */
function writeAll(fd: number, data: Buffer, position: number | null): void {
  for (let offset = 0; offset < data.length;) {
    offset += fs.writeSync(fd, data, offset, data.length - offset, position === null ? null : position + offset);
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
      const file = attempt(given, () => workspace.openFile(given, 'read'));
      let content: Buffer;
      try {
        content = attempt(given, () => readCapped(file, maxReadBytes));
      } finally {
        fs.closeSync(file.fd);
      }
      if (content.includes(0)) throw new ToolExecutionError(`"${given}" is a binary file`);
      return {
        path: workspace.display(file.path),
        size: file.size,
        truncated: file.size > content.length,
        content: content.toString('utf8'),
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
      const file = attempt(given, () => workspace.openFile(given, append ? 'append' : 'write'));
      const bytes = Buffer.from(content);
      try {
        attempt(given, () => writeAll(file.fd, bytes, append ? null : 0));
      } finally {
        fs.closeSync(file.fd);
      }
      logger.debug('fs_write', { path: workspace.display(file.path), bytes: bytes.length });
      return { path: workspace.display(file.path), bytes: bytes.length, appended: Boolean(append) };
    },
  });

  const fsEdit = defineTool({
    name: 'fs_edit',
    description:
      'Edits a text file in the workspace: replaces lines startLine..endLine (1-based, inclusive) with newText, ' +
      'or replaces the exact snippet oldText (which must occur exactly once) with newText.',
    parameters: FsEditArgs,
    execute: async (args) => {
      const file = attempt(args.path, () => workspace.openFile(args.path, 'edit'));
      try {
        if (file.size > maxReadBytes) {
          throw new ToolExecutionError(`"${args.path}" is larger than ${maxReadBytes} bytes and cannot be edited`);
        }
        const before = attempt(args.path, () => readCapped(file, maxReadBytes)).toString('utf8');
        const { text, summary } = applyEdit(before, args);
        // Rewritten through the descriptor already checked: the path is not looked up a second time.
        attempt(args.path, () => {
          fs.ftruncateSync(file.fd, 0);
          writeAll(file.fd, Buffer.from(text), 0);
        });
        return { path: workspace.display(file.path), ...summary };
      } finally {
        fs.closeSync(file.fd);
      }
    },
  });

  const fsList = defineTool({
    name: 'fs_list',
    description: `Lists a folder of the workspace (recursive: true walks below it; at most ${MAX_LIST_ENTRIES} entries).`,
    parameters: z.object({
      path: z.string().optional().describe('Folder relative to the workspace; the root when omitted'),
      recursive: z.boolean().optional(),
    }),
    execute: async ({ path: given, recursive }) =>
      attempt(given ?? '.', () => workspace.list(given ?? '.', Boolean(recursive), MAX_LIST_ENTRIES)),
  });

  const fsMkdir = defineTool({
    name: 'fs_mkdir',
    description: 'Creates a folder (and its parents) in the workspace.',
    parameters: z.object({ path: z.string().describe('Folder relative to the workspace') }),
    execute: async ({ path: given }) => {
      const dir = attempt(given, () => workspace.mkdir(given));
      return { path: workspace.display(dir), created: true };
    },
  });

  const fsDelete = defineTool({
    name: 'fs_delete',
    description: 'Deletes a file, or a folder (non-empty ones only with recursive: true), in the workspace.',
    parameters: z.object({ path: z.string(), recursive: z.boolean().optional() }),
    execute: async ({ path: given, recursive }) => {
      const target = attempt(given, () => workspace.remove(given, Boolean(recursive)));
      logger.info('fs_delete', { path: workspace.display(target) });
      return { path: workspace.display(target), deleted: true };
    },
  });

  return [fsRead, fsWrite, fsEdit, fsList, fsMkdir, fsDelete];
}
