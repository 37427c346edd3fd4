import { namedCaller, OWNER } from '../../../src/principal';
import { useStores, type StoresFactory } from './factory';

const alice = namedCaller('bearer:alice');
const bob = namedCaller('bearer:bob');
const at = '2026-05-01T00:00:00.000Z';

/** What every {@link VaultStore} must do (values arrive sealed; the store never sees a plain secret). */
export function vaultStoreContract(factory: StoresFactory): void {
  describe(`vault store (${factory.name})`, () => {
    const opened = useStores(factory);
    const vault = () => opened().stores.vault;

    it('sets node metadata once: the first writer wins', async () => {
      expect(await vault().meta('check')).toBeUndefined();
      expect(await vault().initMeta('check', 'first')).toBe('first');
      expect(await vault().initMeta('check', 'second')).toBe('first');
      expect(await vault().meta('check')).toBe('first');
    });

    it("keeps each principal's secrets its own: same name, two secrets; the owner lists everyone's", async () => {
      expect(await vault().putSecret(alice, 'TOKEN', 'sealed-a', at)).toEqual({ created: true });
      expect(await vault().putSecret(alice, 'TOKEN', 'sealed-a2', at)).toEqual({ created: false });
      expect(await vault().putSecret(bob, 'TOKEN', 'sealed-b', at)).toEqual({ created: true });
      expect(await vault().sealedSecret(alice, 'TOKEN')).toBe('sealed-a2');
      expect(await vault().sealedSecret(bob, 'TOKEN')).toBe('sealed-b');
      expect(await vault().sealedSecret(OWNER, 'TOKEN')).toBeUndefined();
      expect((await vault().listSecrets(alice)).map((s) => [s.owner, s.name])).toEqual([['bearer:alice', 'TOKEN']]);
      expect((await vault().listSecrets(OWNER)).map((s) => s.owner)).toEqual(['bearer:alice', 'bearer:bob']);
      expect(await vault().deleteSecret(bob, 'MISSING')).toBe(false);
      expect(await vault().deleteSecret(bob, 'TOKEN')).toBe(true);
      expect(await vault().sealedSecret(alice, 'TOKEN')).toBe('sealed-a2');
      expect((await vault().allSecrets()).map((s) => [s.owner, s.name, s.sealed])).toEqual([
        ['bearer:alice', 'TOKEN', 'sealed-a2'],
      ]);
    });

    it("keeps the node's keys: the first pair stored under a name stays", async () => {
      const key = {
        name: 'node',
        algorithm: 'Ed25519',
        publicKey: 'pub-1',
        sealedPrivateKey: 'sealed-1',
        createdAt: at,
      };
      expect(await vault().addKey(key)).toEqual(key);
      expect(await vault().addKey({ ...key, publicKey: 'pub-2', sealedPrivateKey: 'sealed-2' })).toEqual(key);
      expect(await (await opened().reopen()).vault.key('node')).toEqual(key);
      expect(await opened().stores.vault.key('wallet')).toBeUndefined();
      expect((await opened().stores.vault.listKeys()).map((k) => k.name)).toEqual(['node']);
    });
  });
}
