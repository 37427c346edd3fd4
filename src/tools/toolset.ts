import type { AnyTool } from '../agent/tool';
import type { ToolFamily, ToolFamilyDeps, ToolFamilyInstance } from './families';

/** How one tool family came up: on (with its tools), off by config, or broken (with the reason). */
export interface FamilyStatus {
  name: string;
  agent: string;
  state: 'on' | 'off' | 'broken';
  reason?: string;
  tools: string[];
}

/** The node's tools from every family that came up, and those families' lifecycles. */
export interface Toolset {
  tools: AnyTool[];
  instances: ToolFamilyInstance[];
  statuses: FamilyStatus[];
  /** Closes every instance, last created first; one failing close does not stop the others. */
  close(): Promise<void>;
}

/**
 * Creates each enabled family in table order. A family whose factory throws
 * is left out and reported as broken: the node starts without it (its
 * specialist then has fewer tools, or is not created at all).
 */
export async function createToolset(families: readonly ToolFamily[], deps: ToolFamilyDeps): Promise<Toolset> {
  const tools: AnyTool[] = [];
  const instances: ToolFamilyInstance[] = [];
  const statuses: FamilyStatus[] = [];
  for (const family of families) {
    if (!family.enabled(deps.config)) {
      statuses.push({ name: family.name, agent: family.agent, state: 'off', tools: [] });
      continue;
    }
    try {
      const instance = await family.create({ ...deps, logger: deps.logger.child({ component: `tools.${family.name}` }) });
      instances.push(instance);
      tools.push(...instance.tools);
      statuses.push({ name: family.name, agent: family.agent, state: 'on', tools: instance.tools.map((t) => t.name) });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      deps.logger.warn('tool family unavailable; starting without it', { family: family.name, reason });
      statuses.push({ name: family.name, agent: family.agent, state: 'broken', reason, tools: [] });
    }
  }
  return {
    tools,
    instances,
    statuses,
    async close() {
      for (const instance of [...instances].reverse()) {
        try {
          await instance.close?.();
        } catch (err) {
          deps.logger.warn('tool family failed to close', { error: err instanceof Error ? err.message : String(err) });
        }
      }
    },
  };
}
