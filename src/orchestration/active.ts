import type { AnyTool } from '../agent/tool';
import { capabilityDescription } from './capabilities';
import { toolsForSpec, type RoleToolSet } from './partition';
import { agentSpecs, type AgentSpec } from './specs';

/** A specialist that will be created, with the tools it owns. */
export interface ActiveSpec {
  spec: AgentSpec;
  tools: AnyTool[];
}

/**
 * The specialists to create for a partitioned tool set, in table order:
 * those owning at least one tool, plus those marked `alwaysInclude` (the
 * planner). Shared by the tree builder and the instruction builder so both
 * always agree on who exists ("Conditional Sub-Agent Creation").
 */
export function activeSpecs(set: RoleToolSet<string>, specs: readonly AgentSpec[] = agentSpecs): ActiveSpec[] {
  return specs
    .map((spec) => ({ spec, tools: toolsForSpec(set, spec.name) }))
    .filter(({ spec, tools }) => tools.length > 0 || spec.alwaysInclude);
}

/**
 * A sub-agent's description: `<role description>. Capabilities: <phrases>`,
 * or the role description alone when it owns no tools (the planner). Never
 * contains raw tool names.
 * @example
 * subAgentDescription(operatorSpec, [execShell, fsRead]);
 * // 'Runs shell commands, … and runs skills. Capabilities: command execution, file operations'
 */
export function subAgentDescription(
  spec: AgentSpec,
  tools: readonly AnyTool[],
  specs: readonly AgentSpec[] = agentSpecs,
): string {
  const capabilities = capabilityDescription(tools, specs);
  return capabilities ? `${spec.description}. Capabilities: ${capabilities}` : spec.description;
}
