import { ToolExecutionError } from '../../errors';

/** `{{secret:NAME}}`: how the model refers to a secret it may use but never read. */
export const SECRET_REFERENCE = /\{\{secret:([A-Za-z][A-Za-z0-9_-]{0,63})\}\}/g;

/** The reference the model receives for a stored secret. */
export function secretReference(name: string): string {
  return `{{secret:${name}}}`;
}

/** True when `text` holds at least one secret reference. */
export function hasSecretReferences(text: string): boolean {
  return new RegExp(SECRET_REFERENCE.source).test(text);
}

/** The environment variable a secret is bound to in a command: `LANGO_SECRET_<NAME>`. */
export function secretEnvName(name: string): string {
  return `LANGO_SECRET_${name.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`;
}

/**
 * Turns secret references into values at the last moment, inside tool
 * execution: outbound headers, command environments. The model only ever
 * holds the references.
 */
export interface SecretResolver {
  /** Replaces every `{{secret:NAME}}` in `text` with its value; throws naming an unknown secret. */
  resolveSecretReferences(text: string): string;
  /**
   * Rewrites references in a shell command to `${LANGO_SECRET_NAME}` and
   * returns those variables: the value reaches the process environment, never
   * the command line (`ps`) or the text the model sees. A reference expands
   * like a shell variable: bare or inside double quotes, not in single quotes.
   */
  bind(command: string): { command: string; env: Record<string, string> };
}

/** Options for {@link createSecretResolver}. */
export interface SecretResolverOptions {
  /** The plain value of a secret, undefined when there is none (the vault's `secretValue`). */
  lookup(name: string): string | undefined;
}

/**
 * Creates a {@link SecretResolver} over a lookup (normally the vault).
 * @example
 * const resolver = createSecretResolver({ lookup: (name) => vault.secretValue(name) });
 * headers.Authorization = resolver.resolveSecretReferences('Bearer {{secret:PEER_TOKEN}}');
 */
export function createSecretResolver(options: SecretResolverOptions): SecretResolver {
  const valueOf = (name: string): string => {
    const value = options.lookup(name);
    if (value === undefined) throw new ToolExecutionError(`unknown secret "${name}" (see secrets_list)`);
    return value;
  };
  return {
    resolveSecretReferences: (text) => text.replace(SECRET_REFERENCE, (_, name: string) => valueOf(name)),
    bind(command) {
      const env: Record<string, string> = {};
      const rewritten = command.replace(SECRET_REFERENCE, (_, name: string) => {
        const variable = secretEnvName(name);
        env[variable] = valueOf(name);
        return `\${${variable}}`;
      });
      return { command: rewritten, env };
    },
  };
}
