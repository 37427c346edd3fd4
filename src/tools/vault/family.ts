import { ToolExecutionError } from '../../errors';
import type { ToolFamily, ToolFamilyDeps } from '../families';
import { createCryptoTools } from './cryptoTools';
import { createSecretResolver, hasSecretReferences, type SecretResolver } from './references';
import { createSecretsTools } from './secretsTools';
import { openVault, type Vault } from './vault';

/** Opens the vault with a family's deps (`security.masterKey`, else the key file in dataDir). */
export function openVaultFromDeps(deps: Pick<ToolFamilyDeps, 'config' | 'dataDir' | 'db' | 'secrets' | 'clock' | 'logger'>): Vault {
  return openVault({
    db: deps.db,
    dataDir: deps.dataDir,
    masterKey: deps.config.security.masterKey,
    secrets: deps.secrets,
    clock: deps.clock,
    logger: deps.logger.child({ component: 'vault' }),
  });
}

/**
 * A {@link SecretResolver} that opens the vault only when a text actually
 * holds a reference, so exec and federation work (without secrets) even when
 * the vault is off or its key is missing. Hand it to federation for outbound
 * headers and to the exec family for command environments.
 * @example
 * const resolver = createVaultSecretResolver(deps);
 * const header = resolver.resolveSecretReferences('Bearer {{secret:PEER_TOKEN}}');
 */
export function createVaultSecretResolver(
  deps: Pick<ToolFamilyDeps, 'config' | 'dataDir' | 'db' | 'secrets' | 'clock' | 'logger'>,
): SecretResolver {
  let resolver: SecretResolver | undefined;
  const get = (): SecretResolver => {
    if (!deps.config.security.enabled) {
      throw new ToolExecutionError('secret references need the vault, which is off (security.enabled: false)');
    }
    if (!resolver) {
      const vault = openVaultFromDeps(deps);
      resolver = createSecretResolver({ lookup: (name) => vault.secretValue(name) });
    }
    return resolver;
  };
  return {
    resolveSecretReferences: (text) => (hasSecretReferences(text) ? get().resolveSecretReferences(text) : text),
    bind: (command) => (hasSecretReferences(command) ? get().bind(command) : { command, env: {} }),
  };
}

/** `crypto_*`: hashing, encryption and Ed25519 signing with the node key; gated by `security.enabled`. */
export const cryptoFamily: ToolFamily = {
  name: 'crypto',
  agent: 'vault',
  enabled: (config) => config.security.enabled,
  create: (deps) => ({ tools: createCryptoTools({ vault: openVaultFromDeps(deps) }) }),
};

/** `secrets_*`: the encrypted secret store, values never shown; gated by `security.enabled`. */
export const secretsFamily: ToolFamily = {
  name: 'secrets',
  agent: 'vault',
  enabled: (config) => config.security.enabled,
  create: (deps) => ({
    tools: createSecretsTools({ vault: openVaultFromDeps(deps), logger: deps.logger.child({ component: 'secrets' }) }),
  }),
};
