import type { AnyTool } from '../agent/tool';

/**
 * Tool-name prefix → human-readable capability, used in sub-agent
 * descriptions and agent-card skills instead of raw tool names
 * (multi-agent-orchestration.md, "Capability-based sub-agent descriptions").
 * Ordered like the specialists that own the prefixes.
 */
export const capabilityTable: ReadonlyArray<readonly [prefix: string, phrase: string]> = Object.freeze([
  ['exec', 'command execution'],
  ['fs_', 'file operations'],
  ['skill_', 'skill management'],
  ['browser_', 'web browsing'],
  ['crypto_', 'cryptography'],
  ['secrets_', 'secret management'],
  ['payment_', 'blockchain payments (USDC on Base)'],
  ['search_', 'information search'],
  ['rag_', 'knowledge retrieval (RAG)'],
  ['graph_', 'knowledge graph traversal'],
  ['save_knowledge', 'knowledge persistence'],
  ['save_learning', 'learning persistence'],
  ['create_skill', 'skill creation'],
  ['list_skills', 'skill listing'],
  ['librarian_', 'knowledge inquiries and gap detection'],
  ['memory_', 'memory storage and recall'],
  ['observe_', 'event observation'],
  ['reflect_', 'reflection and summarization'],
  ['cron_', 'cron job scheduling'],
  ['bg_', 'background task execution'],
  ['workflow_', 'workflow pipeline execution'],
] as const);

/** The phrase for a tool that matches no prefix. */
export const GENERAL_CAPABILITY = 'general actions';

/**
 * The capability phrase of a tool name: the phrase of the longest matching
 * prefix, or `""` when none matches.
 * @example
 * toolCapability('cron_add');      // 'cron job scheduling'
 * toolCapability('mystery_thing'); // ''
 */
export function toolCapability(toolName: string): string {
  let best: readonly [string, string] | undefined;
  for (const entry of capabilityTable) {
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
export function capabilityDescription(tools: ReadonlyArray<Pick<AnyTool, 'name'>>): string {
  const phrases: string[] = [];
  for (const tool of tools) {
    const phrase = toolCapability(tool.name) || GENERAL_CAPABILITY;
    if (!phrases.includes(phrase)) phrases.push(phrase);
  }
  return phrases.join(', ');
}
