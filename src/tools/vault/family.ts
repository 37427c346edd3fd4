import { getAddress, isAddress } from 'viem';
import { ConfigError, ToolExecutionError } from '../../errors';
import type { ToolFamily, ToolFamilyDeps } from '../family';
import { createCryptoTools } from './cryptoTools';
import { BASE_RPC_URL, BASE_USDC, createTokenChain, walletAccount } from './payment/chain';
import { createPaymentLedger } from './payment/ledger';
import { createPaymentTools } from './payment/tools';
import { createSecretResolver, hasSecretReferences, type SecretResolver } from './references';
import { createSecretsTools } from './secretsTools';
import { openVault, type Vault } from './vault';

/** Vaults opened per database: the crypto, secrets, payment and skills families share one. */
const openVaults = new WeakMap<ToolFamilyDeps['db'], { key: string; vault: Vault }>();

/**
 * The vault for a family's deps (`security.masterKey`, else the key file in
 * dataDir), opened once per database and key: opening checks the key and
 * decrypts every secret to register it for masking, work the families would
 * otherwise each repeat at start.
 */
export function openVaultFromDeps(
  deps: Pick<ToolFamilyDeps, 'config' | 'dataDir' | 'db' | 'secrets' | 'clock' | 'logger'>,
): Vault {
  const key = JSON.stringify([deps.dataDir, deps.config.security.masterKey ?? null]);
  const opened = openVaults.get(deps.db);
  if (opened?.key === key) return opened.vault;
  const vault = openVault({
    db: deps.db,
    dataDir: deps.dataDir,
    masterKey: deps.config.security.masterKey,
    secrets: deps.secrets,
    clock: deps.clock,
    logger: deps.logger.child({ component: 'vault' }),
  });
  openVaults.set(deps.db, { key, vault });
  return vault;
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

/**
 * `payment_*`: USDC on Base (or the configured chain) from the node wallet,
 * with limits, approvals and a ledger; gated by `payment.enabled`. Needs the
 * vault for the wallet key, and an RPC URL and token address unless the chain
 * is Base mainnet (8453), whose public RPC and USDC are the defaults.
 */
export const paymentFamily: ToolFamily = {
  name: 'payment',
  agent: 'vault',
  enabled: (config) => config.payment.enabled,
  create: (deps) => {
    const payment = deps.config.payment;
    if (!deps.config.security.enabled)
      throw new ConfigError('payment needs the vault for its wallet key: set security.enabled');
    const onBase = payment.chainId === 8453;
    const rpcUrl = payment.rpcUrl ?? (onBase ? BASE_RPC_URL : undefined);
    const tokenAddress = payment.usdcAddress ?? (onBase ? BASE_USDC : undefined);
    if (!rpcUrl) throw new ConfigError(`payment.rpcUrl is required for chain ${payment.chainId}`);
    if (!tokenAddress || !isAddress(tokenAddress, { strict: false })) {
      throw new ConfigError(`payment.usdcAddress must be the token's address on chain ${payment.chainId}`);
    }
    const vault = openVaultFromDeps(deps);
    const account = walletAccount(vault, (secret) => deps.secrets.add(secret));
    const token = getAddress(tokenAddress);
    return {
      tools: createPaymentTools({
        chain: createTokenChain({ rpcUrl, chainId: payment.chainId, token, account }),
        ledger: createPaymentLedger(deps.db),
        wallet: account.address,
        token,
        chainId: payment.chainId,
        limits: {
          perTransactionLimit: payment.perTransactionLimit,
          dailyLimit: payment.dailyLimit,
          approvalThreshold: payment.approvalThreshold,
        },
        clock: deps.clock,
        logger: deps.logger.child({ component: 'payment' }),
      }),
    };
  },
};
