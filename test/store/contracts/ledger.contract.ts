import { namedCaller, OWNER } from '../../../src/principal';
import type { NewPayment } from '../../../src/store/ledger';
import { useStores, type StoresFactory } from './factory';

const alice = namedCaller('bearer:alice');
const bob = namedCaller('bearer:bob');
const send = (amount: string, units: bigint, at = new Date('2026-05-01T10:00:00Z')): NewPayment => ({
  at,
  chainId: 8453,
  token: '0xtoken',
  from: '0xwallet',
  to: '0xshop',
  amount,
  units,
});

/** What every {@link PaymentLedger} must do. */
export function ledgerContract(factory: StoresFactory): void {
  describe(`payment ledger (${factory.name})`, () => {
    const opened = useStores(factory);
    const ledger = () => opened().stores.ledger;

    it('records sends before they go, settles them, and counts pending and confirmed ones per UTC day', async () => {
      const first = await ledger().begin(OWNER, send('1', 1_000_000n), 5_000_000n);
      if (!first.ok) throw new Error('the first send fits');
      const second = await ledger().begin(OWNER, send('2', 2_000_000n), 5_000_000n);
      if (!second.ok) throw new Error('the second send fits');
      await ledger().begin(OWNER, send('9', 9_000_000n, new Date('2026-05-02T00:00:01Z')), 50_000_000n);
      await ledger().settle(first.id, { status: 'confirmed', txHash: '0xabc', at: new Date() });
      await ledger().settle(second.id, { status: 'failed', error: 'reverted', at: new Date() });
      expect(await ledger().spentOn('2026-05-01')).toBe(1_000_000n);
      const history = await ledger().history(OWNER, 10);
      expect(history.map((p) => [p.amount, p.status, p.txHash])).toEqual([
        ['9', 'pending', null],
        ['2', 'failed', null],
        ['1', 'confirmed', '0xabc'],
      ]);
      expect(history[1].error).toBe('reverted');
    });

    it('refuses a send past the daily limit as it records, so two at once cannot both fit', async () => {
      const results = await Promise.all([
        ledger().begin(alice, send('3', 3_000_000n), 5_000_000n),
        ledger().begin(bob, send('3', 3_000_000n), 5_000_000n),
      ]);
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.find((r) => !r.ok)).toEqual({ ok: false, spent: 3_000_000n });
      // The limit is the wallet's: everyone's sends count, whoever asks.
      expect(await ledger().spentOn('2026-05-01')).toBe(3_000_000n);
    });

    it("shows each caller its own sends and the owner everyone's", async () => {
      await ledger().begin(alice, send('1', 1n), 100n);
      await ledger().begin(bob, send('2', 2n), 100n);
      expect((await ledger().history(alice, 10)).map((p) => [p.owner, p.amount])).toEqual([['bearer:alice', '1']]);
      expect((await ledger().history(bob, 10)).map((p) => p.amount)).toEqual(['2']);
      expect((await ledger().history(OWNER, 10)).map((p) => p.amount)).toEqual(['2', '1']);
    });
  });
}
