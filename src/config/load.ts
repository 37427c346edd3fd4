import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { ConfigError } from '../errors';
import { checkConfig } from './check';
import { keyPath } from './issues';
import type { LangoConfig } from './schema';
import { describeYamlError } from './yamlError';
import { otherNodesFile, resolveCardFiles } from './files';

/** Where {@link loadConfig} looks, in order, when no path is given. */
export const DEFAULT_CONFIG_FILES = ['lango.config.yaml', 'lango.config.yml', 'lango.config.json'];

/** Options for {@link loadConfig}; `env` and `cwd` are injected so tests need no globals. */
export interface LoadConfigOptions {
  /** `--config PATH`; wins over `LANGO_CONFIG` and the default file names. */
  path?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * Names of the node's own agents (the roots and every specialist,
   * `reservedAgentNames()`): a remote agent may take none of them, in any
   * case. The table lives above this layer, so the caller passes it.
   */
  reservedAgentNames?: readonly string[];
  /** `--data-dir DIR`: wins over `LANGO_DATA_DIR` and the file's `dataDir`. */
  dataDir?: string;
}

/** A validated, frozen configuration and the file it came from (undefined: defaults only). */
export interface LoadedConfig {
  config: LangoConfig;
  file?: string;
  /**
   * A file discovery found but did not read: another node's (it names the
   * data folder `dataDir`, and this node was given another one).
   */
  notRead?: { file: string; dataDir: string };
}

/**
 * Reads, substitutes and validates the configuration. This module is the only
 * reader of `process.env` in the node.
 *
 * Precedence: schema defaults < config file < environment (`PORT`,
 * `LOG_LEVEL`, `OPENAI_API_KEY` / `LANGO_API_KEY` when `agent.apiKey` is unset,
 * `OPENAI_BASE_URL` when `agent.baseUrl` is unset, `LANGO_MASTER_KEY` when
 * `security.masterKey` is unset, `LANGO_DATA_DIR`, the `OTEL_EXPORTER_OTLP_*`
 * trace exporter variables) < `--data-dir` (`options.dataDir`). String values
 * may use `${VAR}` or `${VAR:-default}`.
 *
 * @throws ConfigError with one line per problem, every problem of the file at once.
 * @example
 * const { config } = loadConfig({ path: 'lango.config.yaml' });
 */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const named = options.path ?? env.LANGO_CONFIG;
  const found = findConfigFile(named, cwd);
  const read = found ? readConfigFile(found) : {};
  // Every problem at once: unset variables, bad environment values, the schema and the rules across fields.
  const earlier: string[] = [];
  let substituted = substituteEnv(read, env, [], earlier);
  // A discovered file of another node's data folder is not this node's configuration (issue 34, 7).
  const otherFolder =
    found && !named ? otherNodesFile(substituted, options.dataDir || env.LANGO_DATA_DIR, cwd) : undefined;
  const file = otherFolder ? undefined : found;
  if (otherFolder) {
    earlier.length = 0;
    substituted = {};
  }
  const withEnv = applyEnvironment(substituted, env, earlier, options.dataDir);
  resolveCardFiles(withEnv, file ? path.dirname(file) : cwd, earlier);
  const checked = checkConfig(withEnv, { earlier, reservedAgentNames: options.reservedAgentNames });
  if (!checked.ok) throw new ConfigError(describe(file, checked.problems.length), checked.problems);
  return {
    config: deepFreeze(checked.config),
    file,
    ...(otherFolder && found ? { notRead: { file: found, dataDir: otherFolder } } : {}),
  };
}

/**
 * Validates an in-memory configuration (library users, tests) with the same
 * checks as {@link loadConfig} but without reading files or the environment.
 */
export function resolveConfig(input: unknown): LangoConfig {
  const checked = checkConfig(input);
  if (!checked.ok) throw new ConfigError(describe(undefined, checked.problems.length), checked.problems);
  return deepFreeze(checked.config);
}

function describe(file: string | undefined, count: number): string {
  return `invalid configuration${file ? ` in ${file}` : ''} (${count} problem${count === 1 ? '' : 's'})`;
}

function findConfigFile(explicit: string | undefined, cwd: string): string | undefined {
  if (explicit) {
    const file = path.resolve(cwd, explicit);
    if (!fs.existsSync(file)) throw new ConfigError(`config file not found: ${file}`, [`${explicit}: file not found`]);
    return file;
  }
  return DEFAULT_CONFIG_FILES.map((name) => path.join(cwd, name)).find((f) => fs.existsSync(f));
}

function readConfigFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}`, [`${file}: ${(err as Error).message}`]);
  }
  let value: unknown;
  try {
    value = file.endsWith('.json') ? JSON.parse(text) : YAML.parse(text);
  } catch (err) {
    throw new ConfigError(`cannot parse config file ${file}`, [
      `${path.basename(file)}: ${describeYamlError(text, err)}`,
    ]);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(`cannot parse config file ${file}`, [
      `${path.basename(file)}: the top level must be a mapping of keys`,
    ]);
  }
  return value;
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces `${VAR}` / `${VAR:-default}` in every string, noting unset variables by key path. */
function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, at: (string | number)[], problems: string[]): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REF, (_match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      problems.push(`${keyPath(at)}: environment variable ${name} is not set`);
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, [...at, i], problems));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v, env, [...at, k], problems)]));
  }
  return value;
}

/**
 * The standard OpenTelemetry exporter variables, for traces: the signal's own
 * variable wins over the general one (whose URL gets `/v1/traces`), and
 * either wins over the file, as the OTel specification has it.
 * `OTEL_SDK_DISABLED=true` turns export off.
 */
function applyOtelEnvironment(
  observability: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  problems: string[],
): void {
  const current = observability.otlp;
  const otlp = (current && typeof current === 'object' ? current : {}) as Record<string, unknown>;
  const general = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const endpoint =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (general ? `${general.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (endpoint) otlp.tracesEndpoint = endpoint;
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol) otlp.protocol = protocol;
  const headers = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS || env.OTEL_EXPORTER_OTLP_HEADERS;
  if (headers) {
    const parsed: Record<string, string> = {};
    for (const pair of headers.split(',')) {
      const at = pair.indexOf('=');
      try {
        if (at <= 0) throw new Error('no key');
        parsed[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
      } catch {
        problems.push('OTEL_EXPORTER_OTLP_HEADERS: expected comma-separated key=value pairs (URL-encoded)');
        break;
      }
    }
    otlp.headers = { ...(otlp.headers as Record<string, string> | undefined), ...parsed };
  }
  if (env.OTEL_SERVICE_NAME) otlp.serviceName = env.OTEL_SERVICE_NAME;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') delete otlp.tracesEndpoint;
  if (Object.keys(otlp).length > 0) observability.otlp = otlp;
}

/**
 * Environment overrides that operators expect from any server (`PORT`,
 * `LOG_LEVEL`, API keys, `LANGO_DATA_DIR`), and the `--data-dir` flag over them.
 */
function applyEnvironment(
  input: unknown,
  env: NodeJS.ProcessEnv,
  problems: string[],
  dataDirFlag: string | undefined,
): unknown {
  const config = structuredClone(input) as Record<string, Record<string, unknown> | unknown>;
  const section = (name: string): Record<string, unknown> => {
    const current = config[name];
    if (current === undefined) config[name] = {};
    return (config[name] && typeof config[name] === 'object' ? config[name] : {}) as Record<string, unknown>;
  };
  if (env.PORT !== undefined && env.PORT !== '') {
    const port = Number(env.PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      problems.push(`PORT: "${env.PORT}" is not a port number (0-65535)`);
    else section('server').port = port;
  }
  if (env.LOG_LEVEL) config.logLevel = env.LOG_LEVEL;
  const dataDir = dataDirFlag || env.LANGO_DATA_DIR;
  if (dataDir) config.dataDir = dataDir;
  const agent = section('agent');
  const apiKey = env.LANGO_API_KEY || env.OPENAI_API_KEY;
  if (agent.apiKey === undefined && apiKey) agent.apiKey = apiKey;
  if (agent.baseUrl === undefined && env.OPENAI_BASE_URL) agent.baseUrl = env.OPENAI_BASE_URL;
  applyOtelEnvironment(section('observability'), env, problems);
  if (env.LANGO_MASTER_KEY) {
    const security = section('security');
    if (security.masterKey === undefined) security.masterKey = env.LANGO_MASTER_KEY;
  }
  return config;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
