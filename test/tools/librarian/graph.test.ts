import { createMemoryLogger } from '../../../src/log/logger';
import { OWNER } from '../../../src/principal';
import { createLibrarian } from '../../../src/tools/librarian/family';
import { callTool, configOf, tempNode } from '../../support/librarianHarness';

const clock = () => new Date('2026-11-21T12:00:00Z');

describe('librarian knowledge graph', () => {
  let node: ReturnType<typeof tempNode>;
  beforeEach(() => {
    node = tempNode('graph', { clock });
  });
  afterEach(() => node.cleanup());

  const librarian = (graphEnabled = true) =>
    createLibrarian({
      config: configOf({ graph: { enabled: graphEnabled }, embedding: { provider: 'none' } }),
      dataDir: node.dataDir,
      stores: node.stores,
      logger: createMemoryLogger(),
    });

  it('keeps triples with SPO, POS and OSP indexes and answers subject, predicate and object patterns', async () => {
    const { tools } = librarian();
    const added = await callTool(tools, 'graph_add', {
      triples: [
        { subject: 'billing-api', predicate: 'depends_on', object: 'postgres' },
        { subject: 'billing-api', predicate: 'owned_by', object: 'team-payments' },
        { subject: 'ledger', predicate: 'depends_on', object: 'postgres' },
        { subject: 'billing-api', predicate: 'depends_on', object: 'postgres' },
      ],
    });
    expect(added).toEqual({ added: 3, given: 4 });
    const indexes = (node.db.prepare(`PRAGMA index_list('graph_triples')`).all() as { name: string }[]).map(
      (i) => i.name,
    );
    expect(indexes).toEqual(expect.arrayContaining(['graph_pos', 'graph_osp', 'sqlite_autoindex_graph_triples_1']));

    const bySubject = await callTool(tools, 'graph_query', { subject: 'billing-api' });
    expect(bySubject.triples.map((t: { object: string }) => t.object)).toEqual(['postgres', 'team-payments']);
    const dependents = await callTool(tools, 'graph_query', { predicate: 'depends_on', object: 'postgres' });
    expect(dependents.triples.map((t: { subject: string }) => t.subject)).toEqual(['billing-api', 'ledger']);
    const plan = node.db
      .prepare(`EXPLAIN QUERY PLAN SELECT subject FROM graph_triples WHERE object = ? AND predicate = ?`)
      .all('postgres', 'depends_on') as { detail: string }[];
    expect(plan.map((p) => p.detail).join(' ')).toMatch(/USING (COVERING )?INDEX graph_(pos|osp)/);
  });

  it('traverses from a start node to a depth, optionally along some predicates only', async () => {
    const { tools } = librarian();
    await callTool(tools, 'graph_add', {
      triples: [
        { subject: 'checkout', predicate: 'calls', object: 'billing-api' },
        { subject: 'billing-api', predicate: 'depends_on', object: 'postgres' },
        { subject: 'postgres', predicate: 'runs_on', object: 'db-host-1' },
        { subject: 'checkout', predicate: 'owned_by', object: 'team-web' },
      ],
    });
    const one = await callTool(tools, 'graph_traverse', { start: 'checkout', depth: 1 });
    expect(one.edges.map((e: { object: string; depth: number }) => [e.object, e.depth])).toEqual([
      ['billing-api', 1],
      ['team-web', 1],
    ]);
    const deep = await callTool(tools, 'graph_traverse', {
      start: 'checkout',
      depth: 3,
      predicates: ['calls', 'depends_on', 'runs_on'],
    });
    expect(deep.edges.map((e: { object: string; depth: number }) => [e.object, e.depth])).toEqual([
      ['billing-api', 1],
      ['postgres', 2],
      ['db-host-1', 3],
    ]);
    const back = await callTool(tools, 'graph_traverse', { start: 'postgres', depth: 1, direction: 'both' });
    expect(back.edges.map((e: { subject: string }) => e.subject).sort()).toEqual(['billing-api', 'postgres']);
  });

  it('lets saved knowledge add triples that are then found through the graph', async () => {
    const { tools } = librarian();
    const saved = await callTool(tools, 'save_knowledge', {
      kind: 'fact',
      content: 'Ada Lovelace wrote the first published algorithm, for the Analytical Engine.',
      triples: [{ subject: 'Ada Lovelace', predicate: 'wrote_for', object: 'Analytical Engine' }],
    });
    expect(saved.triplesAdded).toBe(1);
    const found = await callTool(tools, 'graph_query', { object: 'Analytical Engine' });
    expect(found.triples).toEqual([{ subject: 'Ada Lovelace', predicate: 'wrote_for', object: 'Analytical Engine' }]);
    const source = node.db.prepare('SELECT source FROM graph_triples').get() as { source: string };
    expect(source.source).toBe(`knowledge:${saved.saved.id}`);
  });

  it('saves knowledge without its triples and says so when the graph is disabled', async () => {
    const { tools } = librarian(false);
    expect(tools.some((t) => t.name.startsWith('graph_'))).toBe(false);
    const saved = await callTool(tools, 'save_knowledge', {
      kind: 'fact',
      content: 'Grace Hopper popularised the term debugging.',
      triples: [{ subject: 'Grace Hopper', predicate: 'popularised', object: 'debugging' }],
    });
    expect(saved.note).toMatch(/graph is disabled/);
    expect(saved.triplesAdded).toBeUndefined();
    expect(await node.stores.graph.query(OWNER, {}, 10)).toEqual([]);
  });
});
