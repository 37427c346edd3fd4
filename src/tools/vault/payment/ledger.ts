import { migrate, type SqliteDatabase } from '../../../store/database';

const MIGRATIONS = [
  `CREATE TABLE payment_transactions (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     created_at TEXT NOT NULL,
     day TEXT NOT NULL,
     chain_id INTEGER NOT NULL,
     token TEXT NOT NULL,
     from_address TEXT NOT NULL,
     to_address TEXT NOT NULL,
     amount TEXT NOT NULL,
     amount_units TEXT NOT NULL,
     status TEXT NOT NULL,
     tx_hash TEXT,
     error TEXT,
     memo TEXT,
     session_id TEXT,
     updated_at TEXT NOT NULL);
   CREATE INDEX payment_transactions_day ON payment_transactions (day, status);`,
];

/** `pending` until the receipt arrives; `failed` covers reverts and RPC errors. */
export type PaymentStatus = 'pending' | 'confirmed' | 'failed';

/** One recorded send, as `payment_history` shows it. */
export interface PaymentRecord {
  id: number;
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

/** The UTC calendar day of `date` (`YYYY-MM-DD`): the daily limit resets at 00:00 UTC. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * Every payment the node attempts, recorded before it is sent and updated
 * with its outcome, so the daily limit counts sends in flight and nothing
 * goes unrecorded when the node dies mid-send.
 */
export interface PaymentLedger {
  begin(entry: {
    at: Date;
    chainId: number;
    token: string;
    from: string;
    to: string;
    amount: string;
    units: bigint;
    memo?: string;
    sessionId?: string;
  }): number;
  settle(id: number, outcome: { status: PaymentStatus; txHash?: string; error?: string; at: Date }): void;
  /** Base units sent or in flight (pending + confirmed) on `day`. */
  spentOn(day: string): bigint;
  history(limit: number): PaymentRecord[];
}

/** Creates the ledger over the node database (table `payment_transactions`). */
export function createPaymentLedger(db: SqliteDatabase): PaymentLedger {
  migrate(db, 'payment', MIGRATIONS);
  return {
    begin(e) {
      const at = e.at.toISOString();
      const result = db
        .prepare(
          `INSERT INTO payment_transactions
             (created_at, day, chain_id, token, from_address, to_address, amount, amount_units, status, memo, session_id, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
        )
        .run(
          at,
          utcDay(e.at),
          e.chainId,
          e.token,
          e.from,
          e.to,
          e.amount,
          e.units.toString(),
          e.memo ?? null,
          e.sessionId ?? null,
          at,
        );
      return Number(result.lastInsertRowid);
    },
    settle(id, o) {
      db.prepare(
        'UPDATE payment_transactions SET status = ?, tx_hash = COALESCE(?, tx_hash), error = ?, updated_at = ? WHERE id = ?',
      ).run(o.status, o.txHash ?? null, o.error ?? null, o.at.toISOString(), id);
    },
    spentOn(day) {
      const rows = db
        .prepare(`SELECT amount_units FROM payment_transactions WHERE day = ? AND status IN ('pending', 'confirmed')`)
        .all(day) as { amount_units: string }[];
      return rows.reduce((sum, r) => sum + BigInt(r.amount_units), 0n);
    },
    history(limit) {
      return (
        db.prepare('SELECT * FROM payment_transactions ORDER BY id DESC LIMIT ?').all(limit) as Record<
          string,
          unknown
        >[]
      ).map((r) => ({
        id: r.id as number,
        createdAt: r.created_at as string,
        chainId: r.chain_id as number,
        token: r.token as string,
        from: r.from_address as string,
        to: r.to_address as string,
        amount: r.amount as string,
        status: r.status as PaymentStatus,
        txHash: (r.tx_hash as string | null) ?? null,
        error: (r.error as string | null) ?? null,
        memo: (r.memo as string | null) ?? null,
      }));
    },
  };
}
