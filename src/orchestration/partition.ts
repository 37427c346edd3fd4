import type { AnyTool } from '../agent/tool';
import { agentSpecs, type SpecName } from './specs';

/**
 * Tools split by the specialist that owns them, plus the ones nobody owns
 * (multi-agent-orchestration.md, "RoleToolSet has seven roles plus Unmatched").
 * `planner` is always empty: the planner is LLM only.
 */
export interface RoleToolSet {
  operator: AnyTool[];
  navigator: AnyTool[];
  vault: AnyTool[];
  librarian: AnyTool[];
  automator: AnyTool[];
  planner: AnyTool[];
  chronicler: AnyTool[];
  /** Tools matching no prefix: adapted to no agent, listed in the orchestrator instruction. */
  unmatched: AnyTool[];
}

/**
 * The order specialists' prefixes are tried in; the first match wins.
 * The librarian goes first because `save_knowledge`, `create_skill` and
 * `list_skills` would otherwise be taken by broader prefixes; the automator
 * goes before the operator so `cron_`/`bg_`/`workflow_` never land there
 * (design-subagent-redesign.md decision 3; "Tool partitioning order").
 */
export const prefixMatchOrder: readonly SpecName[] = Object.freeze([
  'librarian',
  'chronicler',
  'automator',
  'navigator',
  'vault',
  'operator',
]);

/** Prefixes per specialist in match order, read from the registry (data-driven). */
const matchTable: ReadonlyArray<{
  name: SpecName;
  prefixes: readonly string[];
}> = prefixMatchOrder.map((name) => {
  const spec = agentSpecs.find((candidate) => candidate.name === name);
  if (!spec) throw new Error(`prefix match order names unknown spec "${name}"`);
  return { name, prefixes: spec.prefixes };
});

/** The specialist that owns a tool name, or undefined when none does. */
export function ownerOfTool(toolName: string): SpecName | undefined {
  return matchTable.find(({ prefixes }) => prefixes.some((prefix) => toolName.startsWith(prefix)))?.name;
}

/** An empty {@link RoleToolSet}. */
function emptyRoleToolSet(): RoleToolSet {
  return {
    operator: [],
    navigator: [],
    vault: [],
    librarian: [],
    automator: [],
    planner: [],
    chronicler: [],
    unmatched: [],
  };
}

/**
 * Splits tools among the specialists by name prefix, keeping their order.
 * Note `exec` has no underscore: `exec`, `exec_shell` and `execute_x` all go
 * to the operator.
 * @example
 * const set = partitionTools([execShell, browserNavigate, mysteryTool]);
 * set.operator;  // [execShell]
 * set.unmatched; // [mysteryTool]
 */
export function partitionTools(tools: readonly AnyTool[]): RoleToolSet {
  const set = emptyRoleToolSet();
  for (const tool of tools) {
    const owner = ownerOfTool(tool.name);
    (owner ? set[owner] : set.unmatched).push(tool);
  }
  return set;
}

/**
 * The tools of the specialist named `name` (an empty list for an unknown
 * name or the planner).
 */
export function toolsForSpec(set: RoleToolSet, name: string): AnyTool[] {
  if (name === 'unmatched' || !Object.prototype.hasOwnProperty.call(set, name)) return [];
  return set[name as SpecName];
}
