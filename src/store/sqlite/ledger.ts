import { visibleOwner } from '../../principal';
import { paymentFromRow, utcDay, type PaymentLedger, type PaymentRow } from '../ledger';
import { migrate, type SqliteDatabase } from './database';

const STEPS = [
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
];

/** The {@link PaymentLedger} in SQLite (`payment_transactions`). */
export function createSqlitePaymentLedger(options: { db: SqliteDatabase }): PaymentLedger {
  const { db } = options;
  migrate(db, 'payment', STEPS);
  const spentOn = (day: string): bigint =>
    (
      db
        .prepare(`SELECT amount_units FROM payment_transactions WHERE day = ? AND status IN ('pending', 'confirmed')`)
        .all(day) as { amount_units: string }[]
    ).reduce((sum, r) => sum + BigInt(r.amount_units), 0n);
  return {
    async begin(principal, e, dailyLimit) {
      const at = e.at.toISOString();
      return db.transaction(() => {
        const spent = spentOn(utcDay(e.at));
        if (spent + e.units > dailyLimit) return { ok: false as const, spent };
        const result = db
          .prepare(
            `INSERT INTO payment_transactions
             (owner, created_at, day, chain_id, token, from_address, to_address, amount, amount_units, status, memo, session_id, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
          )
          .run(
            principal.id,
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
        return { ok: true as const, id: String(result.lastInsertRowid) };
      })();
    },
    async settle(id, o) {
      db.prepare(
        'UPDATE payment_transactions SET status = ?, tx_hash = COALESCE(?, tx_hash), error = ?, updated_at = ? WHERE id = ?',
      ).run(o.status, o.txHash ?? null, o.error ?? null, o.at.toISOString(), Number(id));
    },
    spentOn: async (day) => spentOn(day),
    async history(principal, limit) {
      const owner = visibleOwner(principal) ?? null;
      return (
        db
          .prepare('SELECT * FROM payment_transactions WHERE (? IS NULL OR owner = ?) ORDER BY id DESC LIMIT ?')
          .all(owner, owner, limit) as PaymentRow[]
      ).map(paymentFromRow);
    },
  };
}
