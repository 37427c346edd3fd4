import { visibleOwner } from '../../principal';
import { paymentFromRow, utcDay, type PaymentLedger, type PaymentRow } from '../ledger';
import { anyOrEqual } from './dialect';
import { rowId } from './rows';
import type { Sql, StoreSchema } from './sql';

/** Every payment the node attempts (`payment_transactions`). */
export const LEDGER_SCHEMA: StoreSchema = {
  store: 'payment',
  sqlite: [
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
    `ALTER TABLE payment_transactions ADD COLUMN owner TEXT NOT NULL DEFAULT 'owner';
     CREATE INDEX payment_transactions_by_owner ON payment_transactions (owner, id);`,
  ],
  postgres: [
    `CREATE TABLE payment_transactions (
       id BIGSERIAL PRIMARY KEY, owner TEXT NOT NULL, created_at TEXT NOT NULL, day TEXT NOT NULL,
       chain_id INTEGER NOT NULL, token TEXT NOT NULL, from_address TEXT NOT NULL, to_address TEXT NOT NULL,
       amount TEXT NOT NULL, amount_units NUMERIC(78, 0) NOT NULL, status TEXT NOT NULL, tx_hash TEXT, error TEXT,
       memo TEXT, session_id TEXT, updated_at TEXT NOT NULL);
     CREATE INDEX payment_transactions_day ON payment_transactions (day, status);
     CREATE INDEX payment_transactions_by_owner ON payment_transactions (owner, id);`,
  ],
};

/** Base units sent or in flight on `day` (summed here: SQLite keeps them as text, too long for its integers). */
const spentOn = async (sql: Sql, day: string): Promise<bigint> =>
  (
    await sql.all<{ amount_units: string }>(
      `SELECT amount_units FROM payment_transactions WHERE day = ? AND status IN ('pending', 'confirmed')`,
      [day],
    )
  ).reduce((sum, r) => sum + BigInt(r.amount_units), 0n);

/**
 * The {@link PaymentLedger}. `begin` checks and records under the day's
 * lock, so sends at once (on any replica) take turns against the same daily
 * allowance.
 */
export function createPaymentLedger(options: { sql: Sql }): PaymentLedger {
  const { sql } = options;
  return {
    begin(principal, e, dailyLimit) {
      const at = e.at.toISOString();
      const day = utcDay(e.at);
      return sql.transaction(
        async (tx) => {
          const spent = await spentOn(tx, day);
          if (spent + e.units > dailyLimit) return { ok: false as const, spent };
          const row = await tx.get<{ id: number | string }>(
            `INSERT INTO payment_transactions
               (owner, created_at, day, chain_id, token, from_address, to_address, amount, amount_units, status, memo,
                session_id, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) RETURNING id`,
            [
              principal.id,
              at,
              day,
              e.chainId,
              e.token,
              e.from,
              e.to,
              e.amount,
              e.units.toString(),
              e.memo ?? null,
              e.sessionId ?? null,
              at,
            ],
          );
          return { ok: true as const, id: String(row!.id) };
        },
        { lock: `lango:payment-day:${day}` },
      );
    },
    async settle(id, o) {
      const wanted = rowId(id);
      if (wanted === undefined) return;
      await sql.run(
        'UPDATE payment_transactions SET status = ?, tx_hash = COALESCE(?, tx_hash), error = ?, updated_at = ? WHERE id = ?',
        [o.status, o.txHash ?? null, o.error ?? null, o.at.toISOString(), wanted],
      );
    },
    spentOn: (day) => spentOn(sql, day),
    async history(principal, limit) {
      const owner = visibleOwner(principal) ?? null;
      const found = await sql.all<PaymentRow>(
        `SELECT * FROM payment_transactions WHERE ${anyOrEqual('owner')} ORDER BY id DESC LIMIT ?`,
        [owner, owner, limit],
      );
      return found.map((r) => paymentFromRow({ ...r, chain_id: Number(r.chain_id) }));
    },
  };
}
