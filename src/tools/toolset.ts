import type { AnyTool } from '../agent/tool';
import type { ToolFamily, ToolFamilyDeps, ToolFamilyInstance } from './family';

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
  /** The tools now, in table order (a family may change its own at runtime). */
  readonly tools: AnyTool[];
  instances: ToolFamilyInstance[];
  /** How each family came up, with its tools now. */
  readonly statuses: FamilyStatus[];
  /** Closes every instance, last created first; one failing close does not stop the others. */
  close(): Promise<void>;
}

/**
 * Creates each enabled family in table order. A family whose factory throws
 * is left out and reported as broken: the node starts without it (its
 * specialist then has fewer tools, or is not created at all).
 */
export async function createToolset(families: readonly ToolFamily[], deps: ToolFamilyDeps): Promise<Toolset> {
  const instances: ToolFamilyInstance[] = [];
  const created: Array<{
    family: ToolFamily;
    instance?: ToolFamilyInstance;
    state: FamilyStatus['state'];
    reason?: string;
  }> = [];
  for (const family of families) {
    if (!family.enabled(deps.config)) {
      created.push({ family, state: 'off' });
      continue;
    }
    try {
      const instance = await family.create({
        ...deps,
        logger: deps.logger.child({ component: `tools.${family.name}` }),
      });
      instances.push(instance);
      created.push({ family, instance, state: 'on' });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      deps.logger.warn('tool family unavailable; starting without it', { family: family.name, reason });
      created.push({ family, state: 'broken', reason });
    }
  }
  return {
    get tools() {
      return instances.flatMap((instance) => instance.tools);
    },
    instances,
    get statuses() {
      return created.map(({ family, instance, state, reason }) => ({
        name: family.name,
        agent: family.agent,
        state,
        ...(reason ? { reason } : {}),
        tools: instance ? instance.tools.map((t) => t.name) : [],
      }));
    },
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
