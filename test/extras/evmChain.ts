import fs from 'node:fs';
import path from 'node:path';
import ganache from 'ganache';
import {
  createPublicClient,
  createWalletClient,
  http,
  parseEther,
  parseUnits,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
// solc ships its compiler (soljson) inside the npm package: no download at test time.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const solc = require('solc') as { compile(input: string): string };

/** A real local EVM node (ganache, in-process, JSON-RPC over HTTP on 127.0.0.1) with a test USDC deployed. */
export interface TestChain {
  rpcUrl: string;
  chainId: number;
  usdc: Address;
  /** Mints test USDC (decimal amount) to `to`. */
  mint(to: Address, amount: string): Promise<void>;
  /** Sends ETH for gas from the funded deployer. */
  fundEth(to: Address, amount: string): Promise<void>;
  /** USDC balance in base units, read straight from the contract. */
  balanceOf(who: Address): Promise<bigint>;
  close(): Promise<void>;
}

function compileTestUsdc(): { abi: Abi; bytecode: Hex } {
  const input = {
    language: 'Solidity',
    sources: { 'TestUSDC.sol': { content: fs.readFileSync(path.join(__dirname, 'fixtures', 'TestUSDC.sol'), 'utf8') } },
    settings: {
      evmVersion: 'paris',
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const contract = output.contracts['TestUSDC.sol'].TestUSDC;
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
}

/** Starts ganache on 127.0.0.1:0 with `chainId`, compiles and deploys TestUSDC (6 decimals). */
export async function startTestChain(chainId = 8453): Promise<TestChain> {
  const server = ganache.server({
    logging: { quiet: true },
    chain: { chainId },
    wallet: { deterministic: true, totalAccounts: 2 },
    miner: { instamine: 'eager' },
  });
  await server.listen(0, '127.0.0.1');
  const address = (server as unknown as { address(): { port: number } }).address();
  const rpcUrl = `http://127.0.0.1:${address.port}`;
  const accounts = (await server.provider.getInitialAccounts()) as Record<string, { secretKey: string }>;
  const deployer = privateKeyToAccount(Object.values(accounts)[0].secretKey as Hex);
  const chain = {
    id: chainId,
    name: 'test',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  } as const;
  const reader = createPublicClient({ chain, transport: http(rpcUrl) });
  const writer = createWalletClient({ chain, transport: http(rpcUrl), account: deployer });
  const { abi, bytecode } = compileTestUsdc();
  const deployHash = await writer.deployContract({ abi, bytecode });
  const receipt = await reader.waitForTransactionReceipt({ hash: deployHash });
  const usdc = receipt.contractAddress as Address;
  return {
    rpcUrl,
    chainId,
    usdc,
    async mint(to, amount) {
      const hash = await writer.writeContract({
        address: usdc,
        abi,
        functionName: 'mint',
        args: [to, parseUnits(amount, 6)],
      });
      await reader.waitForTransactionReceipt({ hash });
    },
    async fundEth(to, amount) {
      const hash = await writer.sendTransaction({ to, value: parseEther(amount) });
      await reader.waitForTransactionReceipt({ hash });
    },
    balanceOf: async (who) =>
      (await reader.readContract({ address: usdc, abi, functionName: 'balanceOf', args: [who] })) as bigint,
    close: () => server.close(),
  };
}
