import { LangoConfig, type LangoConfigInput } from '../../src/config/schema';
import type { Model } from '../../src/llm/model';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { SecretRegistry } from '../../src/log/redact';
import { createPackageLoader, type PackageLoader } from '../../src/packages';
import { defaultPrincipals } from '../../src/principal';
import type { Storage } from '../../src/store/index';
import type { ToolFamilyDeps } from '../../src/toolset/family';
import { createSecretReferences } from '../../src/vault/references';
import { openVault, requireVault, type VaultAccess } from '../../src/vault/vault';

/** A model for families that must not call one: any call fails the test loudly. */
export const unusedModel: Model = {
  name: 'unused',
  // eslint-disable-next-line require-yield
  async *stream() {
    throw new Error('these tool families must not call the model');
  },
};

/**
 * Family dependencies as the composition root builds them, over a real
 * storage: the vault opened once (when `security.enabled`), secret
 * references over it, the default principal directory.
 */
export async function testFamilyDeps(options: {
  storage: Storage;
  dataDir: string;
  config?: Omit<LangoConfigInput, 'dataDir'>;
  logger?: MemoryLogger;
  clock?: () => Date;
  secrets?: SecretRegistry;
  /** The optional packages' loader; Node's own resolution when absent. */
  packages?: PackageLoader;
}): Promise<ToolFamilyDeps & { logger: MemoryLogger; toolChanges: { count: number } }> {
  const parsed = LangoConfig.parse({ ...options.config, dataDir: options.dataDir });
  // LANGO_TEST_HIDE_BWRAP=1 runs a suite as on a machine without bubblewrap (the fallback every exec test must pass).
  const config = process.env.LANGO_TEST_HIDE_BWRAP
    ? { ...parsed, tools: { ...parsed.tools, exec: { ...parsed.tools.exec, bwrapPath: '/nonexistent/bwrap' } } }
    : parsed;
  const logger = options.logger ?? createMemoryLogger();
  const secrets = options.secrets ?? new SecretRegistry();
  const clock = options.clock ?? (() => new Date());
  let vault: VaultAccess = { ok: false, reason: 'the vault is off (security.enabled: false)' };
  if (config.security.enabled) {
    try {
      vault = {
        ok: true,
        vault: await openVault({
          store: options.storage.stores.vault,
          dataDir: options.dataDir,
          masterKey: config.security.masterKey,
          secrets,
          clock,
          logger,
        }),
      };
    } catch (err) {
      vault = { ok: false, reason: (err as Error).message };
    }
  }
  const toolChanges = { count: 0 };
  return {
    config,
    dataDir: options.dataDir,
    stores: options.storage.stores,
    vault,
    secretReferences: createSecretReferences({
      lookup: (principal, name) => requireVault(vault).secretValue(principal, name),
    }),
    principals: defaultPrincipals,
    logger,
    secrets,
    clock,
    packages: options.packages ?? createPackageLoader(),
    toolChanges,
    toolsChanged: () => void (toolChanges.count += 1),
  };
}
