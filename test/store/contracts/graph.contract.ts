import { namedCaller, OWNER } from '../../../src/principal';
import { traverseGraph } from '../../../src/store/graph';
import { useStores, type StoresFactory } from './factory';

const alice = namedCaller('bearer:alice');
const bob = namedCaller('bearer:bob');

/** What every {@link GraphStore} must do. */
export function graphStoreContract(factory: StoresFactory): void {
  describe(`graph store (${factory.name})`, () => {
    const opened = useStores(factory);
    const graph = () => opened().stores.graph;

    it('adds each triple once, answers patterns and walks the graph', async () => {
      expect(
        await graph().add(OWNER, [
          { subject: 'billing', predicate: 'depends_on', object: 'postgres' },
          { subject: 'billing', predicate: 'owned_by', object: 'payments' },
          { subject: 'postgres', predicate: 'runs_on', object: 'vm-1' },
        ]),
      ).toBe(3);
      expect(await graph().add(OWNER, [{ subject: 'billing', predicate: 'depends_on', object: 'postgres' }])).toBe(0);
      expect(await graph().query(OWNER, { subject: 'billing' }, 10)).toEqual([
        { subject: 'billing', predicate: 'depends_on', object: 'postgres' },
        { subject: 'billing', predicate: 'owned_by', object: 'payments' },
      ]);
      expect(await graph().query(OWNER, { object: 'postgres' }, 10)).toHaveLength(1);
      expect(await graph().query(OWNER, {}, 2)).toHaveLength(2);
      const edges = await traverseGraph(graph(), OWNER, { start: 'billing', depth: 2, direction: 'out', limit: 10 });
      expect(edges.map((e) => [e.object, e.depth])).toEqual([
        ['postgres', 1],
        ['payments', 1],
        ['vm-1', 2],
      ]);
      const back = await traverseGraph(graph(), OWNER, { start: 'postgres', depth: 1, direction: 'both', limit: 10 });
      expect(back.map((e) => e.subject).sort()).toEqual(['billing', 'postgres']);
    });

    it("keeps each caller's statements from every other caller; the owner sees each triple once", async () => {
      await graph().add(alice, [{ subject: 'alice', predicate: 'knows', object: 'carol' }]);
      await graph().add(bob, [{ subject: 'alice', predicate: 'knows', object: 'carol' }]);
      await graph().add(bob, [{ subject: 'bob', predicate: 'knows', object: 'dave' }]);
      expect(await graph().query(alice, { predicate: 'knows' }, 10)).toEqual([
        { subject: 'alice', predicate: 'knows', object: 'carol' },
      ]);
      expect(await traverseGraph(graph(), alice, { start: 'bob', depth: 2, direction: 'both', limit: 10 })).toEqual([]);
      expect(await graph().query(OWNER, { predicate: 'knows' }, 10)).toEqual([
        { subject: 'alice', predicate: 'knows', object: 'carol' },
        { subject: 'bob', predicate: 'knows', object: 'dave' },
      ]);
    });
  });
}
