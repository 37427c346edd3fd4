import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AnyTool, ToolContext } from '../../src/agent/tool';
import { LangoConfig, type LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import { openDatabase, type SqliteDatabase } from '../../src/store/database';

/** A temp data dir with a real database file in it; `cleanup` closes and removes both. */
export function tempNode(prefix: string): {
  dataDir: string;
  dbFile: string;
  db: SqliteDatabase;
  reopen: () => SqliteDatabase;
  cleanup: () => void;
} {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `lango-${prefix}-`));
  const dbFile = path.join(dataDir, 'lango.db');
  const opened: SqliteDatabase[] = [openDatabase(dbFile)];
  return {
    dataDir,
    dbFile,
    db: opened[0],
    reopen: () => {
      const db = openDatabase(dbFile);
      opened.push(db);
      return db;
    },
    cleanup: () => {
      for (const db of opened) if (db.open) db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A parsed config with defaults. */
export function configOf(input: LangoConfigInput = {}): LangoConfig {
  return LangoConfig.parse(input);
}

/** A tool context for `sessionId`, as the runtime would build it. */
export function toolContext(sessionId = 'session-1', agentName = 'librarian'): ToolContext {
  return { signal: new AbortController().signal, logger: createMemoryLogger(), sessionId, agentName, approved: false };
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
