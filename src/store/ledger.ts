import type { Principal } from '../principal';

/** `pending` until the receipt arrives; `failed` covers reverts and RPC errors. */
export type PaymentStatus = 'pending' | 'confirmed' | 'failed';

/** One recorded send, as `payment_history` shows it. */
export interface PaymentRecord {
  id: string;
  /** The principal whose turn sent it. */
  owner: string;
  createdAt: string;
  chainId: number;
  token: string;
  from: string;
  to: string;
  /** Decimal USDC, e.g. "2.5". */
  amount: string;
  status: PaymentStatus;
  txHash: string | null;
  error: string | null;
  memo: string | null;
}

/** A send about to be made. */
export interface NewPayment {
  at: Date;
  chainId: number;
  token: string;
  from: string;
  to: string;
  amount: string;
  /** Base units of the token. */
  units: bigint;
  memo?: string;
  sessionId?: string;
}

/** The UTC calendar day of `date` (`YYYY-MM-DD`): the daily limit resets at 00:00 UTC. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * Every payment the node attempts, recorded before it is sent and updated
 * with its outcome, so the daily limit counts sends in flight and nothing
 * goes unrecorded when the node dies mid-send. Each send belongs to the
 * principal whose turn made it; the daily limit is the node wallet's and
 * counts everyone's.
 */
export interface PaymentLedger {
  /**
   * Records a pending send if the wallet's total for its UTC day, with it,
   * stays within `dailyLimit` (base units): checked and recorded atomically,
   * so two sends at once cannot both fit under the same allowance. Resolves
   * with the send's id, or with what was already spent that day.
   */
  begin(
    principal: Principal,
    entry: NewPayment,
    dailyLimit: bigint,
  ): Promise<{ ok: true; id: string } | { ok: false; spent: bigint }>;
  settle(id: string, outcome: { status: PaymentStatus; txHash?: string; error?: string; at: Date }): Promise<void>;
  /** Base units sent or in flight (pending + confirmed) on `day`, by anyone: the wallet's daily total. */
  spentOn(day: string): Promise<bigint>;
  /** Sends the principal can see (the owner: everyone's), newest first. */
  history(principal: Principal, limit: number): Promise<PaymentRecord[]>;
}

/** A row of `payment_transactions` as both databases return it (SQLite's id is an integer, PostgreSQL's a string). */
export interface PaymentRow {
  id: number | string;
  owner: string;
  created_at: string;
  chain_id: number;
  token: string;
  from_address: string;
  to_address: string;
  amount: string;
  status: PaymentStatus;
  tx_hash: string | null;
  error: string | null;
  memo: string | null;
}

/** The one mapping from a ledger row to what the ledger answers. */
export const paymentFromRow = (r: PaymentRow): PaymentRecord => ({
  id: String(r.id),
  owner: r.owner,
  createdAt: r.created_at,
  chainId: r.chain_id,
  token: r.token,
  from: r.from_address,
  to: r.to_address,
  amount: r.amount,
  status: r.status,
  txHash: r.tx_hash ?? null,
  error: r.error ?? null,
  memo: r.memo ?? null,
});
