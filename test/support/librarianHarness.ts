import type { AnyTool, ToolContext } from '../../src/agent/tool';
import { LangoConfig, type LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger } from '../../src/log/logger';
import { OWNER, type Principal } from '../../src/principal';
import { openTestStorage } from './storage';

/** A temp data dir with a real storage in it (see {@link openTestStorage}); `cleanup` closes and removes both. */
export function tempNode(prefix: string, options: { clock?: () => Date } = {}) {
  const test = openTestStorage({ clock: options.clock, prefix: `lango-${prefix}-` });
  return {
    dataDir: test.dir,
    dbFile: test.file,
    get storage() {
      return test.storage;
    },
    get stores() {
      return test.stores;
    },
    get db() {
      return test.db;
    },
    reopen: async () => {
      await test.reopen();
      return test.storage;
    },
    cleanup: () => test.close(),
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
