import { ToolExecutionError } from '../errors';
import type { Principal } from '../principal';

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
 * holds the references, and a reference names the calling principal's own
 * secret. Built once by the composition root over the vault.
 */
export interface SecretReferences {
  /** Replaces every `{{secret:NAME}}` in `text` with the principal's value; throws naming an unknown secret. */
  resolve(principal: Principal, text: string): Promise<string>;
  /**
   * Rewrites references in a shell command to `${LANGO_SECRET_NAME}` and
   * returns those variables: the value reaches the process environment, never
   * the command line (`ps`) or the text the model sees. A reference expands
   * like a shell variable: bare or inside double quotes, not in single quotes.
   */
  bind(principal: Principal, command: string): Promise<{ command: string; env: Record<string, string> }>;
}

/** Options for {@link createSecretReferences}. */
export interface SecretReferencesOptions {
  /**
   * The principal's plain value of a secret, undefined when there is none
   * (the vault's `secretValue`). Called only for text that holds a
   * reference, so a node without a vault serves every text without one; it
   * may throw to say why no secret can be read (the vault is off).
   */
  lookup(principal: Principal, name: string): Promise<string | undefined>;
}

/**
 * Creates the {@link SecretReferences} over a lookup (normally the vault).
 * @example
 * const refs = createSecretReferences({ lookup: (principal, name) => vault.secretValue(principal, name) });
 * headers.Authorization = await refs.resolve(OWNER, 'Bearer {{secret:PEER_TOKEN}}');
 */
export function createSecretReferences(options: SecretReferencesOptions): SecretReferences {
  /** The value of every reference in `text`, looked up once each. */
  const valuesIn = async (principal: Principal, text: string): Promise<Map<string, string>> => {
    const values = new Map<string, string>();
    for (const [, name] of text.matchAll(SECRET_REFERENCE)) {
      if (values.has(name)) continue;
      const value = await options.lookup(principal, name);
      if (value === undefined) throw new ToolExecutionError(`unknown secret "${name}" (see secrets_list)`);
      values.set(name, value);
    }
    return values;
  };
  return {
    async resolve(principal, text) {
      if (!hasSecretReferences(text)) return text;
      const values = await valuesIn(principal, text);
      return text.replace(SECRET_REFERENCE, (_, name: string) => values.get(name) as string);
    },
    async bind(principal, command) {
      if (!hasSecretReferences(command)) return { command, env: {} };
      const values = await valuesIn(principal, command);
      const env: Record<string, string> = {};
      const rewritten = command.replace(SECRET_REFERENCE, (_, name: string) => {
        const variable = secretEnvName(name);
        env[variable] = values.get(name) as string;
        return `\${${variable}}`;
      });
      return { command: rewritten, env };
    },
  };
}
