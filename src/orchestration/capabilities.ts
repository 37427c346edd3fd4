import type { AnyTool } from '../agent/tool';
import { agentSpecs, type AgentSpec } from './specs';

/**
 * Tool-name prefix → human-readable capability, used in sub-agent
 * descriptions and agent-card skills instead of raw tool names
 * (multi-agent-orchestration.md, "Capability-based sub-agent descriptions").
 * Read from the spec rows, ordered like the specialists that own the prefixes.
 */
export function capabilityTable(
  specs: readonly AgentSpec[] = agentSpecs,
): ReadonlyArray<readonly [prefix: string, phrase: string]> {
  return specs.flatMap((spec) => spec.prefixes.map((prefix) => [prefix, spec.capabilities[prefix]] as const));
}

const defaultTable = capabilityTable();

/** The phrase for a tool that matches no prefix. */
export const GENERAL_CAPABILITY = 'general actions';

/**
 * The capability phrase of a tool name: the phrase of the longest matching
 * prefix, or `""` when none matches.
 * @example
 * toolCapability('cron_add');      // 'cron job scheduling'
 * toolCapability('mystery_thing'); // ''
 */
export function toolCapability(toolName: string, specs?: readonly AgentSpec[]): string {
  let best: readonly [string, string] | undefined;
  for (const entry of specs ? capabilityTable(specs) : defaultTable) {
    if (toolName.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  }
  return best ? best[1] : '';
}

/**
 * The deduplicated capability phrases of `tools`, in first-seen order,
 * joined by ", "; a tool matching no prefix contributes "general actions".
 * @example
 * capabilityDescription([execShell, execRun, fsRead]); // 'command execution, file operations'
 */
export function capabilityDescription(
  tools: ReadonlyArray<Pick<AnyTool, 'name'>>,
  specs?: readonly AgentSpec[],
): string {
  const phrases: string[] = [];
  for (const tool of tools) {
    const phrase = toolCapability(tool.name, specs) || GENERAL_CAPABILITY;
    if (!phrases.includes(phrase)) phrases.push(phrase);
  }
  return phrases.join(', ');
}
