import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ToolContext, AnyTool } from '../../../src/agent/tool';
import { createMemoryLogger, type MemoryLogger } from '../../../src/log/logger';
import { OWNER } from '../../../src/principal';

/** A tool context for direct tool calls in tests. */
export function toolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    signal: new AbortController().signal,
    logger: createMemoryLogger(),
    principal: OWNER,
    sessionId: 'test-session',
    agentName: 'operator',
    approved: false,
    ...overrides,
  };
}

/** Calls a tool the way the runtime does: arguments parsed by its schema first. */

export async function callTool(tool: AnyTool, args: unknown, ctx: ToolContext = toolContext()): Promise<any> {
  const parsed = tool.parameters.safeParse(args);
  if (!parsed.success) throw new Error(`bad arguments for ${tool.name}: ${parsed.error.message}`);
  return tool.execute(parsed.data, ctx);
}

/** Finds a tool by name in a family's list. */
export function byName(tools: AnyTool[], name: string): AnyTool {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} among ${tools.map((t) => t.name).join(', ')}`);
  return tool;
}

/** A fresh temp directory, removed by the returned cleanup. */
export function tempDir(prefix = 'lango-op-'): { dir: string; cleanup: () => void } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export type { MemoryLogger };
