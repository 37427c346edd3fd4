import type { AnyTool } from '../agent/tool';
import { agentSpecs, type AgentSpec, type SpecName } from './specs';

/**
 * Tools split by the specialist that owns them, plus the ones nobody owns
 * (multi-agent-orchestration.md, "RoleToolSet has seven roles plus Unmatched").
 * A specialist without prefixes (the planner) always has none.
 */
export type RoleToolSet<Name extends string = SpecName> = Record<Name, AnyTool[]> & {
  /** Tools matching no prefix: adapted to no agent, listed in the orchestrator instruction. */
  unmatched: AnyTool[];
};

/**
 * The specialists whose prefixes are tried, in the order they are tried
 * (each row's `matchPriority`; the first match wins). The librarian goes
 * first because `save_knowledge`, `create_skill` and `list_skills` would
 * otherwise be taken by broader prefixes; the automator goes before the
 * operator so `cron_`/`bg_`/`workflow_` never land there
 * (design-subagent-redesign.md decision 3; "Tool partitioning order").
 */
export function prefixMatchOrder<Name extends string>(specs: readonly AgentSpec<Name>[]): readonly AgentSpec<Name>[] {
  return specs.filter((spec) => spec.prefixes.length > 0).sort((a, b) => a.matchPriority - b.matchPriority);
}

/** Who owns `tool` among `specs` (tried in `order` by prefix): the rule of {@link ownerOfTool}. */
function ownerAmong(
  specs: readonly AgentSpec[],
  order: readonly AgentSpec[],
  tool: Pick<AnyTool, 'name' | 'agent'>,
): string | undefined {
  if (tool.agent !== undefined) return specs.some((spec) => spec.name === tool.agent) ? tool.agent : undefined;
  return order.find((spec) => spec.prefixes.some((prefix) => tool.name.startsWith(prefix)))?.name;
}

/**
 * The specialist that owns a tool: the one its `agent` field names when that
 * is a specialist of `specs`, else the first whose prefix matches its name;
 * undefined when none does. A plain name is matched by prefix only.
 */
export function ownerOfTool(
  tool: string | Pick<AnyTool, 'name' | 'agent'>,
  specs: readonly AgentSpec[] = agentSpecs,
): string | undefined {
  return ownerAmong(specs, prefixMatchOrder(specs), typeof tool === 'string' ? { name: tool } : tool);
}

/**
 * Splits tools among the specialists, keeping their order: a tool whose
 * `agent` names a specialist goes to it (one naming no specialist of `specs`
 * stays unmatched), any other by name prefix. Note `exec` has no underscore:
 * `exec`, `exec_shell` and `execute_x` all go to the operator.
 * @example
 * const set = partitionTools([execShell, browserNavigate, mysteryTool]);
 * set.operator;  // [execShell]
 * set.unmatched; // [mysteryTool]
 */
export function partitionTools(tools: readonly AnyTool[]): RoleToolSet;
export function partitionTools<Name extends string>(
  tools: readonly AnyTool[],
  specs: readonly AgentSpec<Name>[],
): RoleToolSet<Name>;
export function partitionTools(
  tools: readonly AnyTool[],
  specs: readonly AgentSpec[] = agentSpecs,
): RoleToolSet<string> {
  const set: RoleToolSet<string> = { unmatched: [] };
  for (const spec of specs) set[spec.name] = [];
  const order = prefixMatchOrder(specs);
  for (const tool of tools) {
    const owner = ownerAmong(specs, order, tool);
    (owner ? set[owner]! : set.unmatched).push(tool);
  }
  return set;
}

/**
 * The tools of the specialist named `name` (an empty list for an unknown
 * name or the planner).
 */
export function toolsForSpec(set: RoleToolSet<string>, name: string): AnyTool[] {
  if (name === 'unmatched' || !Object.prototype.hasOwnProperty.call(set, name)) return [];
  return set[name];
}
