import { useStores, type StoresFactory } from './factory';

/** What every {@link VectorStore} must do. */
export function vectorStoreContract(factory: StoresFactory): void {
  describe(`vector store (${factory.name})`, () => {
    const opened = useStores(factory);

    it('keeps vectors by collection and provider, with their owner, replacing on put, across a restart', async () => {
      const vectors = opened().stores.vectors;
      await vectors.put('knowledge', 'p1', [
        { id: '1', owner: 'owner', vector: new Float32Array([0.6, 0.8]) },
        { id: '2', owner: 'bearer:alice', vector: new Float32Array([1, 0]) },
      ]);
      await vectors.put('knowledge', 'p1', [{ id: '2', owner: 'bearer:alice', vector: new Float32Array([0, 1]) }]);
      await vectors.put('knowledge', 'p2', [{ id: '3', owner: 'owner', vector: new Float32Array([1, 1]) }]);
      const loaded = await (await opened().reopen()).vectors.load('knowledge', 'p1');
      expect(
        loaded.map((v) => [v.id, v.owner, Array.from(v.vector).map((x) => Math.round(x * 10) / 10)]).sort(),
      ).toEqual([
        ['1', 'owner', [0.6, 0.8]],
        ['2', 'bearer:alice', [0, 1]],
      ]);
      expect(await opened().stores.vectors.load('learnings', 'p1')).toEqual([]);
    });
  });
}
