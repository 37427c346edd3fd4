import type * as Viem from 'viem';
import type * as ViemAccounts from 'viem/accounts';
import type { Address, Hex, PrivateKeyAccount } from 'viem';
import type { PackageLoader } from '../../../packages';
import type { Vault } from '../../../vault/vault';

/** USDC on Base mainnet, used when `payment.usdcAddress` is unset and the chain is Base (8453). */
export const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
/** Base mainnet's public RPC, used when `payment.rpcUrl` is unset and the chain is Base. */
export const BASE_RPC_URL = 'https://mainnet.base.org';
/** Name of the wallet key in the vault. */
export const WALLET_KEY = 'wallet';

/** The two viem entry points the payment tools use, loaded together on first use. */
export interface ViemModules {
  viem: typeof Viem;
  accounts: typeof ViemAccounts;
}

/**
 * Loads viem, an optional package (`src/packages.ts`): the payment tools
 * call this on first use, so a node without it starts and its payment tools
 * answer how to install it.
 * @throws MissingPackageError when viem is not installed.
 */
export function loadViem(packages: PackageLoader, feature: string): ViemModules {
  return {
    viem: packages.load<typeof Viem>('viem', feature),
    accounts: packages.load<typeof ViemAccounts>('viem/accounts', feature),
  };
}

/**
 * The node's wallet: a secp256k1 key generated on first use and kept sealed
 * in the vault (never in config, never shown).
 */
export async function walletAccount(
  { accounts }: ViemModules,
  vault: Vault,
  register: (secret: string) => void,
): Promise<PrivateKeyAccount> {
  const pair = await vault.ensureKey(WALLET_KEY, 'secp256k1', () => {
    const privateKey = accounts.generatePrivateKey();
    return { publicKey: accounts.privateKeyToAccount(privateKey).address, privateKey };
  });
  register(pair.privateKey);
  return accounts.privateKeyToAccount(pair.privateKey as Hex);
}

/** What the payment tools need from the chain: an ERC-20 token and the wallet's native balance. */
export interface TokenChain {
  chainId(): Promise<number>;
  decimals(): Promise<number>;
  tokenBalance(address: Address): Promise<bigint>;
  nativeBalance(address: Address): Promise<bigint>;
  /** Sends `transfer(to, units)` from the wallet; resolves with the hash once mined, rejects on revert. */
  transfer(to: Address, units: bigint): Promise<{ hash: Hex; status: 'success' | 'reverted' }>;
}

/** Options for {@link createTokenChain}. */
export interface TokenChainOptions {
  rpcUrl: string;
  chainId: number;
  token: Address;
  account: PrivateKeyAccount;
  /** Milliseconds to wait for a receipt. */
  receiptTimeoutMs?: number;
}

/**
 * A viem client pair for one ERC-20 token over JSON-RPC (`payment.rpcUrl`).
 * @example
 * const chain = createTokenChain(loadViem(packages, 'payment'), { rpcUrl, chainId: 8453, token: BASE_USDC, account });
 * await chain.tokenBalance(account.address);
 */
export function createTokenChain({ viem }: ViemModules, options: TokenChainOptions): TokenChain {
  const chain = viem.defineChain({
    id: options.chainId,
    name: options.chainId === 8453 ? 'Base' : `chain ${options.chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [options.rpcUrl] } },
  });
  const transport = viem.http(options.rpcUrl, { retryCount: 1, timeout: 20_000 });
  const reader = viem.createPublicClient({ chain, transport });
  const writer = viem.createWalletClient({ chain, transport, account: options.account });
  const { erc20Abi } = viem;
  let decimals: number | undefined;
  return {
    chainId: () => reader.getChainId(),
    async decimals() {
      decimals ??= await reader.readContract({ address: options.token, abi: erc20Abi, functionName: 'decimals' });
      return decimals;
    },
    tokenBalance: (address) =>
      reader.readContract({ address: options.token, abi: erc20Abi, functionName: 'balanceOf', args: [address] }),
    nativeBalance: (address) => reader.getBalance({ address }),
    async transfer(to, units) {
      const { request } = await reader.simulateContract({
        account: options.account,
        address: options.token,
        abi: erc20Abi,
        functionName: 'transfer',
        args: [to, units],
      });
      const hash = await writer.writeContract(request);
      const receipt = await reader.waitForTransactionReceipt({ hash, timeout: options.receiptTimeoutMs ?? 60_000 });
      return { hash, status: receipt.status };
    },
  };
}
