import { ConfigError } from '../../errors';
import { installHint } from '../../packages';
import type { ToolFamily, ToolFamilyDeps } from '../../toolset/family';
import { createCryptoTools } from './cryptoTools';
import { BASE_RPC_URL, BASE_USDC, createTokenChain, loadViem, walletAccount } from './payment/chain';
import { createPaymentTools, type PaymentBackend } from './payment/tools';
import { createSecretsTools } from './secretsTools';
import { requireVault, type Vault } from '../../vault/vault';

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

/** An EVM address as configured (any case: viem checksums it once loaded). */
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** What the payment tools are, for the install hint when viem is missing. */
const PAYMENT_FEATURE = 'the payment tools';

/** viem loaded (or the install hint thrown), the wallet unsealed, the chain's client built: on a tool's first use. */
async function openPaymentBackend(
  { packages, secrets, config }: ToolFamilyDeps,
  vault: Vault,
  chainAt: { rpcUrl: string; tokenAddress: string },
): Promise<PaymentBackend> {
  const modules = loadViem(packages, PAYMENT_FEATURE);
  const account = await walletAccount(modules, vault, (secret) => secrets.add(secret));
  const token = modules.viem.getAddress(chainAt.tokenAddress);
  const chain = createTokenChain(modules, { rpcUrl: chainAt.rpcUrl, chainId: config.payment.chainId, token, account });
  return { viem: modules.viem, chain, wallet: account.address, token };
}

/**
 * `payment_*`: USDC on Base (or the configured chain) from the node wallet,
 * with limits, approvals and a ledger; gated by `payment.enabled`. Needs the
 * vault for the wallet key, and an RPC URL and token address unless the chain
 * is Base mainnet (8453), whose public RPC and USDC are the defaults. viem
 * (an optional package) is loaded and the wallet unsealed on the first call;
 * without viem every tool but the ledger's history answers how to install it.
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
    if (!tokenAddress || !EVM_ADDRESS.test(tokenAddress)) {
      throw new ConfigError(`payment.usdcAddress must be the token's address on chain ${payment.chainId}`);
    }
    const vault = requireVault(deps.vault);
    let opened: Promise<PaymentBackend> | undefined;
    const backend = () =>
      (opened ??= openPaymentBackend(deps, vault, { rpcUrl, tokenAddress }).catch((error: unknown) => {
        opened = undefined; // a failed opening (viem missing, the vault refusing) is tried again on the next call
        throw error;
      }));
    return {
      tools: createPaymentTools({
        backend,
        ledger: deps.stores.ledger,
        chainId: payment.chainId,
        limits: {
          perTransactionLimit: payment.perTransactionLimit,
          dailyLimit: payment.dailyLimit,
          approvalThreshold: payment.approvalThreshold,
        },
        clock: deps.clock,
        logger: deps.logger.child({ component: 'payment' }),
      }),
      ...(deps.packages.installed('viem') ? {} : { warning: installHint('viem', PAYMENT_FEATURE) }),
    };
  },
};
