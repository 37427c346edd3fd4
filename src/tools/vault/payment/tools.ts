import type * as Viem from 'viem';
import type { Address } from 'viem';
import { z } from 'zod';
import { ApprovalRequired, defineTool, type AnyTool } from '../../../agent/tool';
import { errorMessage, ToolExecutionError } from '../../../errors';
import type { Logger } from '../../../log/logger';
import type { TokenChain } from './chain';
import { utcDay, type PaymentLedger } from '../../../store/ledger';

/** `payment.*` limits, in USDC. */
export interface PaymentLimits {
  perTransactionLimit: number;
  dailyLimit: number;
  /** Sends above this amount wait for the user's yes. */
  approvalThreshold: number;
}

/** What a payment tool works with once viem is loaded: viem itself, the chain, the wallet and the token. */
export interface PaymentBackend {
  viem: typeof Viem;
  chain: TokenChain;
  wallet: Address;
  token: Address;
}

/** Options for {@link createPaymentTools}. */
export interface PaymentToolsOptions {
  /**
   * The backend, opened on a tool's first use (viem loaded, the wallet
   * unsealed); rejects with the install hint when viem is not installed.
   */
  backend: () => Promise<PaymentBackend>;
  ledger: PaymentLedger;
  chainId: number;
  limits: PaymentLimits;
  clock: () => Date;
  logger: Logger;
}

const Amount = z
  .string()
  .regex(/^\d+(\.\d+)?$/, 'a decimal amount such as "2.50"')
  .describe('Amount of USDC as a decimal string, e.g. "2.50"');

/**
 * A one-line reason for a failed send: the contract's revert reason when
 * there is one, else viem's short message with the node's details.
 */
export function chainErrorReason(viem: typeof Viem, error: unknown): string {
  if (error instanceof viem.BaseError) {
    const reverted = error.walk((e) => e instanceof viem.ContractFunctionRevertedError);
    if (reverted instanceof viem.ContractFunctionRevertedError && reverted.reason)
      return `reverted: ${reverted.reason}`;
    // Some nodes (ganache) put the reason only in the message text, not in revert data.
    const inText = /\brevert(?:ed)?:?\s+([^\n]+)$/.exec(error.details ?? '');
    if (inText) return `reverted: ${inText[1].trim()}`;
    const details = error.details && error.details !== error.shortMessage ? ` (${error.details})` : '';
    return `${error.shortMessage}${details}`.split('\n').join(' ');
  }
  return errorMessage(error).split('\n')[0];
}

function checkedAddress(viem: typeof Viem, value: string, what: string): Address {
  if (!viem.isAddress(value, { strict: false }))
    throw new ToolExecutionError(`${what} "${value}" is not an Ethereum address`);
  return viem.getAddress(value);
}

/**
 * The vault's payment tools: `payment_wallet_info`, `payment_balance`,
 * `payment_send`, `payment_history`, `payment_limits`. Sends are USDC
 * `transfer`s from the node wallet, refused above the per-transaction limit
 * or past the daily limit (UTC day, sends in flight included), held for
 * approval above the threshold, and recorded before and after. Every tool
 * but `payment_history` (the ledger's) opens the backend first.
 * @example
 * const tools = createPaymentTools({ backend, ledger, chainId, limits, clock, logger });
 */
export function createPaymentTools(options: PaymentToolsOptions): AnyTool[] {
  const { backend, ledger, chainId, limits, clock, logger } = options;
  /** The backend and its USDC arithmetic (the token's decimals read once from the chain). */
  const open = async () => {
    const opened = await backend();
    const { viem, chain } = opened;
    const usdc = async (units: bigint) => viem.formatUnits(units, await chain.decimals());
    const unitsOf = async (amount: number | string) => {
      const places = await chain.decimals();
      // Limits are numbers (toFixed avoids "1e-7"); amounts are decimal strings already.
      return viem.parseUnits(typeof amount === 'number' ? amount.toFixed(places) : amount, places);
    };
    return { ...opened, usdc, unitsOf };
  };

  const limitsReport = async ({ usdc, unitsOf }: Awaited<ReturnType<typeof open>>) => {
    const spent = await ledger.spentOn(utcDay(clock()));
    const daily = await unitsOf(limits.dailyLimit);
    return {
      perTransactionLimit: String(limits.perTransactionLimit),
      dailyLimit: String(limits.dailyLimit),
      approvalThreshold: String(limits.approvalThreshold),
      spentToday: await usdc(spent),
      remainingToday: await usdc(daily > spent ? daily - spent : 0n),
      dayResetsAt: '00:00 UTC',
    };
  };

  return [
    defineTool({
      name: 'payment_wallet_info',
      description: "The node wallet's address, the chain and the USDC token it pays with.",
      parameters: z.object({}),
      execute: async () => {
        const { wallet, token, chain } = await open();
        return { address: wallet, chainId, token, symbol: 'USDC', decimals: await chain.decimals() };
      },
    }),
    defineTool({
      name: 'payment_balance',
      description: 'USDC and ETH (gas) balance of the node wallet, or of another address.',
      parameters: z.object({ address: z.string().optional() }),
      execute: async ({ address }) => {
        const { viem, chain, wallet, usdc } = await open();
        const who = address ? checkedAddress(viem, address, 'address') : wallet;
        const [tokenUnits, native] = await Promise.all([chain.tokenBalance(who), chain.nativeBalance(who)]);
        return { address: who, usdc: await usdc(tokenUnits), eth: viem.formatUnits(native, 18) };
      },
    }),
    defineTool({
      name: 'payment_send',
      description:
        `Sends USDC from the node wallet. Limits: ${limits.perTransactionLimit} USDC per transaction, ` +
        `${limits.dailyLimit} USDC per UTC day; above ${limits.approvalThreshold} USDC the user must approve.`,
      parameters: z.object({ to: z.string(), amount: Amount, memo: z.string().max(200).optional() }),
      execute: async ({ to, amount, memo }, ctx) => {
        const opened = await open();
        const { viem, chain, wallet, token, unitsOf } = opened;
        const recipient = checkedAddress(viem, to, 'recipient');
        const units = await unitsOf(amount);
        if (units <= 0n) throw new ToolExecutionError('amount must be greater than zero');
        if (units > (await unitsOf(limits.perTransactionLimit))) {
          throw new ToolExecutionError(
            `${amount} USDC is above the per-transaction limit of ${limits.perTransactionLimit} USDC`,
          );
        }
        const [dailyUnits, thresholdUnits, onChain] = await Promise.all([
          unitsOf(limits.dailyLimit),
          unitsOf(limits.approvalThreshold),
          chain.chainId(),
        ]);
        if (onChain !== chainId) {
          throw new ToolExecutionError(
            `payment.rpcUrl serves chain ${onChain}, not the configured chain ${chainId}; nothing was sent`,
          );
        }
        const now = clock();
        const overLimit = async (spent: bigint) =>
          new ToolExecutionError(
            `sending ${amount} USDC would pass the daily limit of ${limits.dailyLimit} USDC (${viem.formatUnits(spent, await chain.decimals())} already sent today)`,
          );
        // Checked here so nobody is asked to approve a send that cannot go; the ledger checks again as it records.
        const spent = await ledger.spentOn(utcDay(now));
        if (spent + units > dailyUnits) throw await overLimit(spent);
        if (units > thresholdUnits && !ctx.approved) {
          throw new ApprovalRequired(
            `May I send ${amount} USDC to ${recipient}${memo ? ` (${memo})` : ''}? Answer yes to send it.`,
          );
        }
        const recorded = await ledger.begin(
          ctx.principal,
          { at: now, chainId, token, from: wallet, to: recipient, amount, units, memo, sessionId: ctx.sessionId },
          dailyUnits,
        );
        if (!recorded.ok) throw await overLimit(recorded.spent);
        const { id } = recorded;
        logger.info('payment sending', { id, to: recipient, amount });
        try {
          const sent = await chain.transfer(recipient, units);
          const status = sent.status === 'success' ? 'confirmed' : 'failed';
          await ledger.settle(id, {
            status,
            txHash: sent.hash,
            error: status === 'failed' ? 'transaction reverted' : undefined,
            at: clock(),
          });
          logger.info('payment settled', { id, status, txHash: sent.hash });
          if (status === 'failed') throw new ToolExecutionError(`the transfer reverted on chain (tx ${sent.hash})`);
          return { id, status, txHash: sent.hash, to: recipient, amount, ...(await limitsReport(opened)) };
        } catch (error) {
          if (error instanceof ToolExecutionError) throw error;
          const reason = chainErrorReason(viem, error);
          await ledger.settle(id, { status: 'failed', error: reason, at: clock() });
          logger.warn('payment failed', { id, reason });
          throw new ToolExecutionError(`payment failed: ${reason}`);
        }
      },
    }),
    defineTool({
      name: 'payment_history',
      description: 'Recent payments from the node wallet, newest first, with their status and transaction hash.',
      parameters: z.object({ limit: z.number().int().min(1).max(200).optional() }),
      execute: async ({ limit }, ctx) => ({ payments: await ledger.history(ctx.principal, limit ?? 20) }),
    }),
    defineTool({
      name: 'payment_limits',
      description: 'The payment limits and how much of the daily limit is left.',
      parameters: z.object({}),
      execute: async () => limitsReport(await open()),
    }),
  ];
}
