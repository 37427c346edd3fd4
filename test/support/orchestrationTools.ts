import { z } from 'zod';
import { defineTool, type AnyTool } from '../../src/agent/tool';

/**
 * Real tools (via defineTool) named as given, for orchestration tests: each
 * echoes its own name so a test can tell which one ran.
 * @example
 * const [shell, read] = orchestrationTools('exec_shell', 'fs_read');
 */
export function orchestrationTools(...names: string[]): AnyTool[] {
  return names.map((name) =>
    defineTool({
      name,
      description: `Test tool ${name}.`,
      parameters: z.object({}),
      execute: async () => name,
    }),
  );
}

/** Names of a tool list, for readable assertions. */
export function toolNames(tools: readonly AnyTool[]): string[] {
  return tools.map((tool) => tool.name);
}
