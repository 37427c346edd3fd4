import { getAddress, isAddress } from 'viem';
import { ConfigError } from '../../errors';
import type { ToolFamily } from '../../toolset/family';
import { createCryptoTools } from './cryptoTools';
import { BASE_RPC_URL, BASE_USDC, createTokenChain, walletAccount } from './payment/chain';
import { createPaymentTools } from './payment/tools';
import { createSecretsTools } from './secretsTools';
import { requireVault } from '../../vault/vault';

/** `crypto_*`: hashing, encryption and Ed25519 signing with the node key; gated by `security.enabled`. */
export const cryptoFamily: ToolFamily = {
  name: 'crypto',
  agent: 'vault',
  enabled: (config) => config.security.enabled,
  create: (deps) => ({ tools: createCryptoTools({ vault: requireVault(deps.vault) }) }),
};

/** `secrets_*`: the encrypted secret store, values never shown; gated by `security.enabled`. */
export const secretsFamily: ToolFamily = {
  name: 'secrets',
  agent: 'vault',
  enabled: (config) => config.security.enabled,
  create: (deps) => ({
    tools: createSecretsTools({ vault: requireVault(deps.vault), logger: deps.logger.child({ component: 'secrets' }) }),
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
  create: async (deps) => {
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
    const account = await walletAccount(requireVault(deps.vault), (secret) => deps.secrets.add(secret));
    const token = getAddress(tokenAddress);
    return {
      tools: createPaymentTools({
        chain: createTokenChain({ rpcUrl, chainId: payment.chainId, token, account }),
        ledger: deps.stores.ledger,
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
