import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
import type { Logger } from '../../log/logger';
import { secretReference, secretEnvName } from '../../vault/references';
import type { Vault } from '../../vault/vault';

const Name = z.string().min(1).max(64).describe('Secret name: letters, digits, _ and -, starting with a letter');

/**
 * The vault's secret tools. None of them returns a value: `secrets_get`
 * returns the reference `{{secret:NAME}}`, which exec commands (and outbound
 * headers) resolve while executing, so the value never enters the
 * conversation, the logs or the task history.
 * @example
 * const tools = createSecretsTools({ vault, logger });
 */
export function createSecretsTools(options: { vault: Vault; logger: Logger }): AnyTool[] {
  const { vault, logger } = options;
  const usage = (name: string) =>
    `Use ${secretReference(name)} in an exec command (it becomes the environment variable ` +
    `${secretEnvName(name)}); the value itself is never shown.`;
  return [
    defineTool({
      name: 'secrets_store',
      description: 'Stores (or replaces) a secret in the encrypted vault. The value is never shown again.',
      parameters: z.object({ name: Name, value: z.string().min(1) }),
      execute: async ({ name, value }, ctx) => {
        const { created } = await vault.storeSecret(ctx.principal, name, value);
        logger.info('secret stored', { name, created });
        return { name, stored: true, created, reference: secretReference(name), usage: usage(name) };
      },
    }),
    defineTool({
      name: 'secrets_get',
      description:
        'Gets a reference to a stored secret ({{secret:NAME}}), to put in exec commands; the value is resolved ' +
        'only while the tool runs and never returned.',
      parameters: z.object({ name: Name }),
      execute: async ({ name }, ctx) => {
        if ((await vault.secretValue(ctx.principal, name)) === undefined)
          throw new ToolExecutionError(`unknown secret "${name}" (see secrets_list)`);
        return { name, reference: secretReference(name), usage: usage(name) };
      },
    }),
    defineTool({
      name: 'secrets_list',
      description: 'Lists the names of the stored secrets (never their values).',
      parameters: z.object({}),
      execute: async (_args, ctx) => ({ secrets: await vault.listSecrets(ctx.principal) }),
    }),
    defineTool({
      name: 'secrets_delete',
      description: 'Deletes a stored secret.',
      parameters: z.object({ name: Name }),
      execute: async ({ name }, ctx) => {
        if (!(await vault.deleteSecret(ctx.principal, name)))
          throw new ToolExecutionError(`unknown secret "${name}" (see secrets_list)`);
        logger.info('secret deleted', { name });
        return { name, deleted: true };
      },
    }),
  ];
}
