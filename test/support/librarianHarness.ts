import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AnyTool, ToolContext } from '../../src/agent/tool';
import { LangoConfig, type LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import { OWNER, type Principal } from '../../src/principal';
import { openSqliteStorage, type SqliteStorage } from '../../src/store/sqlite/storage';

/** A temp data dir with a real storage in it; `reopen` closes and opens the same file, `cleanup` closes and removes both. */
export function tempNode(prefix: string, options: { clock?: () => Date } = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `lango-${prefix}-`));
  const dbFile = path.join(dataDir, 'lango.db');
  const open = () =>
    openSqliteStorage({ file: dbFile, logger: createMemoryLogger(), clock: options.clock ?? (() => new Date()) });
  let storage: SqliteStorage = open();
  return {
    dataDir,
    dbFile,
    get storage() {
      return storage;
    },
    get stores() {
      return storage.stores;
    },
    get db() {
      return storage.db;
    },
    async reopen(): Promise<SqliteStorage> {
      await storage.close();
      storage = open();
      return storage;
    },
    async cleanup() {
      await storage.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A parsed config with defaults. */
export function configOf(input: LangoConfigInput = {}): LangoConfig {
  return LangoConfig.parse(input);
}

/** A tool context for `sessionId`, as the runtime would build it. */
export function toolContext(
  sessionId = 'session-1',
  agentName = 'librarian',
  principal: Principal = OWNER,
): ToolContext {
  return {
    signal: new AbortController().signal,
    logger: createMemoryLogger(),
    principal,
    sessionId,
    agentName,
    approved: false,
  };
}

/** Calls tool `name` the way the runtime does: arguments parsed by its schema first. */
export async function callTool(
  tools: AnyTool[],
  name: string,
  args: unknown,
  ctx: ToolContext = toolContext(),
): Promise<any> {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}; have ${tools.map((t) => t.name).join(', ')}`);
  return tool.execute(tool.parameters.parse(args), ctx);
}
