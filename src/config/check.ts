import type { z } from 'zod';
import { clusterProblems } from './cluster';
import { formatIssues } from './issues';
import { LangoConfig } from './schema';

/**
 * The configuration checked in one pass (issue 28): the schema's problems
 * and the rules across fields together, so a person fixes every problem of a
 * file at once instead of meeting the next only after the last is fixed.
 * Rules across fields run even when the schema refused something: on the
 * sections that parsed (a refused section counts as its defaults), or on the
 * raw entries (remote agent names), and a rule's problem at a key path the
 * schema already named is not repeated.
 */

/** What {@link checkConfig} found: the configuration when there is no problem, else one line per problem. */
export type ConfigCheck = { ok: true; config: LangoConfig } | { ok: false; problems: string[] };

/**
 * Checks `input` (the file's values after `${VAR}` substitution and the
 * environment's overrides). `earlier` are problems found before (unset
 * variables): listed first, and the schema does not repeat their key paths.
 * `reservedAgentNames` are the node's own agents, which no remote may be named.
 * @example
 * const checked = checkConfig(input, { reservedAgentNames: reservedAgentNames() });
 * if (!checked.ok) throw new ConfigError('invalid configuration', checked.problems);
 */
export function checkConfig(
  input: unknown,
  options: { earlier?: readonly string[]; reservedAgentNames?: readonly string[] } = {},
): ConfigCheck {
  const parsed = LangoConfig.safeParse(input, { reportInput: true });
  const config = finalize(parsed.success ? parsed.data : sectionDefaults(input));
  const problems = merged([
    options.earlier ?? [],
    parsed.success ? [] : formatIssues(parsed.error, LangoConfig),
    crossFieldProblems(config, input, options.reservedAgentNames ?? []),
  ]);
  return problems.length || !parsed.success ? { ok: false, problems } : { ok: true, config };
}

/** The derived values: the provider, when unset, from whether an API key is there. */
function finalize(config: LangoConfig): LangoConfig {
  const provider = config.agent.provider ?? (config.agent.apiKey ? 'openai' : 'offline');
  return { ...config, agent: { ...config.agent, provider } };
}

/** Each top-level section parsed on its own, a refused one replaced by its defaults: what the rules can read. */
function sectionDefaults(input: unknown): LangoConfig {
  const values = isRecord(input) ? input : {};
  const sections = Object.entries(LangoConfig.shape).map(([key, schema]) => {
    const alone = (schema as z.ZodType).safeParse(values[key]);
    return [key, alone.success ? alone.data : (schema as z.ZodType).parse(undefined)] as const;
  });
  return Object.fromEntries(sections) as LangoConfig;
}

/** The rules no single key can check. */
function crossFieldProblems(config: LangoConfig, input: unknown, reserved: readonly string[]): string[] {
  const problems: string[] = [];
  if (config.agent.provider === 'openai' && !config.agent.apiKey && !config.agent.baseUrl) {
    problems.push(
      'agent.apiKey: required when agent.provider is "openai" (or set agent.baseUrl for a keyless local endpoint)',
    );
  }
  problems.push(...clusterProblems(config), ...remoteNameProblems(rawRemoteNames(input), reserved));
  return problems;
}

/** The names of `a2a.remoteAgents` as written (an entry without a string name has none), by index. */
function rawRemoteNames(input: unknown): Array<string | undefined> {
  const a2a = isRecord(input) ? input.a2a : undefined;
  const list = isRecord(a2a) ? a2a.remoteAgents : undefined;
  return Array.isArray(list)
    ? list.map((entry) => (isRecord(entry) && typeof entry.name === 'string' ? entry.name : undefined))
    : [];
}

/**
 * Remote agent names that would clash when routing, which compares names
 * ignoring case: one named like the node's own agent, or like an earlier remote.
 */
function remoteNameProblems(names: ReadonlyArray<string | undefined>, reserved: readonly string[]): string[] {
  const locals = new Map(reserved.map((name) => [name.toLowerCase(), name]));
  const seen = new Map<string, number>();
  const problems: string[] = [];
  names.forEach((name, i) => {
    if (name === undefined) return;
    const at = `a2a.remoteAgents[${i}].name`;
    const local = locals.get(name.toLowerCase());
    const first = seen.get(name.toLowerCase());
    if (local !== undefined)
      problems.push(`${at}: "${name}" is the name of this node's agent "${local}"; choose another`);
    else if (first !== undefined)
      problems.push(
        `${at}: "${name}" is already the name of a2a.remoteAgents[${first}] ("${names[first]}"); names must differ ignoring case`,
      );
    else seen.set(name.toLowerCase(), i);
  });
  return problems;
}

/** The lists in order, without a line whose key path an earlier line already named. */
function merged(lists: ReadonlyArray<readonly string[]>): string[] {
  const named = new Set<string>();
  const out: string[] = [];
  for (const list of lists) {
    const fresh = list.filter((line) => !named.has(pathOf(line)) || pathOf(line) === '');
    for (const line of fresh) named.add(pathOf(line));
    out.push(...fresh);
  }
  return out;
}

/** The key path a problem line starts with (`a2a.remoteAgents[0].name: …`), or '' for a top-level line. */
function pathOf(line: string): string {
  const match = /^([A-Za-z_][\w-]*(?:\[\d+\]|\.[A-Za-z_][\w-]*)*): /.exec(line);
  return match ? match[1]! : '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
