import type { AnyTool } from '../agent/tool';
import { errorMessage } from '../errors';
import type { FamilyRuntime, ToolFamily, ToolFamilyDeps, ToolFamilyInstance } from './family';

/** How one tool family came up: on (with its tools), off by config, or broken (with the reason). */
export interface FamilyStatus {
  name: string;
  agent: string;
  state: 'on' | 'off' | 'broken';
  reason?: string;
  /** Broken, but nothing in the configuration asked for it: a warning, not a failure (`ToolFamily.optional`). */
  optional?: boolean;
  /** On, but some of its tools lack an optional package: they answer with this (`ToolFamilyInstance.warning`). */
  warning?: string;
  tools: string[];
}

/** The node's tools from every family that came up, and those families' lifecycles. */
export interface Toolset {
  /** The tools now, in table order, each with its family's `agent` (a family may change its own at runtime). */
  readonly tools: AnyTool[];
  instances: ToolFamilyInstance[];
  /** How each family came up, with its tools now. */
  readonly statuses: FamilyStatus[];
  /** The name of the family a tool of the set belongs to (undefined for a tool of no family). */
  familyOf(toolName: string): string | undefined;
  /** Calls `listener` whenever a family's tools change (a skill was added); earlier changes are not replayed. */
  onToolsChanged(listener: () => void): void;
  /** Starts every instance's background work, in table order, once the tree and the runner exist. */
  start(runtime: FamilyRuntime): Promise<void>;
  /** Closes every instance, last created first; one failing close does not stop the others. */
  close(): Promise<void>;
}

/**
 * Creates each enabled family in table order. A family whose factory throws
 * is left out and reported as broken: the node starts without it (its
 * specialist then has fewer tools, or is not created at all).
 */
export async function createToolset(
  families: readonly ToolFamily[],
  deps: Omit<ToolFamilyDeps, 'toolsChanged'>,
): Promise<Toolset> {
  const instances: ToolFamilyInstance[] = [];
  // Each family tool with its family's `agent` (a tool's own wins), made once per tool so the tree
  // sees the same object on every rebuild.
  const owned = new WeakMap<AnyTool, AnyTool>();
  const withOwner = (tool: AnyTool, agent: string): AnyTool => {
    if (tool.agent !== undefined) return tool;
    let tagged = owned.get(tool);
    if (!tagged) {
      tagged = Object.freeze({ ...tool, agent });
      owned.set(tool, tagged);
    }
    return tagged;
  };
  const listeners: Array<() => void> = [];
  const toolsChanged = () => {
    for (const listener of listeners) listener();
  };
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
        toolsChanged,
        logger: deps.logger.child({ component: `tools.${family.name}` }),
      });
      instances.push(instance);
      created.push({ family, instance, state: 'on' });
    } catch (err) {
      const reason = errorMessage(err);
      deps.logger.warn('tool family unavailable; starting without it', { family: family.name, reason });
      created.push({ family, state: 'broken', reason });
    }
  }
  return {
    get tools() {
      return created.flatMap(({ family, instance }) =>
        instance ? instance.tools.map((tool) => withOwner(tool, family.agent)) : [],
      );
    },
    instances,
    get statuses() {
      return created.map(({ family, instance, state, reason }) => ({
        name: family.name,
        agent: family.agent,
        state,
        ...(reason ? { reason } : {}),
        ...(state === 'broken' && family.optional?.(deps.config) ? { optional: true } : {}),
        ...(instance?.warning ? { warning: instance.warning } : {}),
        tools: instance ? instance.tools.map((t) => t.name) : [],
      }));
    },
    familyOf: (toolName) =>
      created.find(({ instance }) => instance?.tools.some((tool) => tool.name === toolName))?.family.name,
    onToolsChanged: (listener) => void listeners.push(listener),
    async start(runtime) {
      for (const instance of instances) await instance.start?.(runtime);
    },
    async close() {
      for (const instance of [...instances].reverse()) {
        try {
          await instance.close?.();
        } catch (err) {
          deps.logger.warn('tool family failed to close', { error: errorMessage(err) });
        }
      }
    },
  };
}
