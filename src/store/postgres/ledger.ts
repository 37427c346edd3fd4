import { visibleOwner } from '../../principal';
import { paymentFromRow, utcDay, type PaymentLedger, type PaymentRow } from '../ledger';
import { rowIds, rows, transaction, type PgDatabase, type PgQueryable, type PgSchema } from './database';

/** Every payment the node attempts (`payment_transactions`). */
export const LEDGER_SCHEMA: PgSchema = {
  store: 'payment',
  steps: [
    `CREATE TABLE payment_transactions (
       id BIGSERIAL PRIMARY KEY, owner TEXT NOT NULL, created_at TEXT NOT NULL, day TEXT NOT NULL,
       chain_id INTEGER NOT NULL, token TEXT NOT NULL, from_address TEXT NOT NULL, to_address TEXT NOT NULL,
       amount TEXT NOT NULL, amount_units NUMERIC(78, 0) NOT NULL, status TEXT NOT NULL, tx_hash TEXT, error TEXT,
       memo TEXT, session_id TEXT, updated_at TEXT NOT NULL);
     CREATE INDEX payment_transactions_day ON payment_transactions (day, status);
     CREATE INDEX payment_transactions_by_owner ON payment_transactions (owner, id);`,
  ],
};

const spentOn = async (db: PgQueryable, day: string): Promise<bigint> => {
  const [row] = await rows<{ spent: string }>(
    db,
    `SELECT COALESCE(SUM(amount_units), 0)::text AS spent FROM payment_transactions
     WHERE day = $1 AND status IN ('pending', 'confirmed')`,
    [day],
  );
  return BigInt(row.spent);
};

/**
 * The {@link PaymentLedger} on PostgreSQL. `begin` checks and records under
 * a transaction-scoped advisory lock on the day, so sends on any replica at
 * once take turns against the same daily allowance.
 */
export function createPgPaymentLedger(options: { db: PgDatabase }): PaymentLedger {
  const { db } = options;
  return {
    async begin(principal, e, dailyLimit) {
      const at = e.at.toISOString();
      const day = utcDay(e.at);
      return transaction(db, async (client) => {
        await client.query(`SELECT pg_advisory_xact_lock(hashtext('lango:payment-day:' || $1))`, [day]);
        const spent = await spentOn(client, day);
        if (spent + e.units > dailyLimit) return { ok: false as const, spent };
        const [row] = await rows<{ id: string }>(
          client,
          `INSERT INTO payment_transactions
             (owner, created_at, day, chain_id, token, from_address, to_address, amount, amount_units, status, memo,
              session_id, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11, $2) RETURNING id`,
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
          ],
        );
        return { ok: true as const, id: String(row.id) };
      });
    },
    async settle(id, o) {
      const [wanted] = rowIds([id]);
      if (wanted === undefined) return;
      await db.query(
        'UPDATE payment_transactions SET status = $1, tx_hash = COALESCE($2, tx_hash), error = $3, updated_at = $4 WHERE id = $5',
        [o.status, o.txHash ?? null, o.error ?? null, o.at.toISOString(), wanted],
      );
    },
    spentOn: async (day) => spentOn(db, day),
    async history(principal, limit) {
      return (
        await rows<PaymentRow>(
          db,
          'SELECT * FROM payment_transactions WHERE ($1::text IS NULL OR owner = $1) ORDER BY id DESC LIMIT $2',
          [visibleOwner(principal) ?? null, limit],
        )
      ).map(paymentFromRow);
    },
  };
}
