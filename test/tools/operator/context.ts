import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApprovalRequired, type ToolContext, type AnyTool } from '../../../src/agent/tool';
import { createMemoryLogger, type MemoryLogger } from '../../../src/log/logger';
import { OWNER } from '../../../src/principal';
import { itNeeding, unmet } from '../../support/prerequisites';

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
  try {
    return await tool.execute(parsed.data, ctx);
  } catch (err) {
    // Without bubblewrap (LANGO_TEST_HIDE_BWRAP, or a machine without it) the owner is asked before every command;
    // the suites that are not about that question answer yes, as the owner would, and test the rest.
    if (NO_BWRAP && err instanceof ApprovalRequired && NO_SANDBOX_QUESTION.test(err.question) && !ctx.approved)
      return tool.execute(parsed.data, { ...ctx, approved: true });
    throw err;
  }
}

/** Bubblewrap is missing here, or hidden for this run: the fallback every exec suite must pass. */
const NO_BWRAP = unmet(['bubblewrap']) !== undefined;

/** The approval question of a command that no sandbox would confine. */
const NO_SANDBOX_QUESTION = /There is no sandbox/;

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

/**
 * `it` for a behaviour that holds only where commands are confined (the policy's own questions, a caller's
 * commands); skipped where bubblewrap is missing or hidden (LANGO_TEST_HIDE_BWRAP), whose fallback
 * test/security/sandbox.test.ts covers, and failing where the machine must have it (see `prerequisites.ts`).
 */
export const itWhenSandboxed = itNeeding('bubblewrap');
