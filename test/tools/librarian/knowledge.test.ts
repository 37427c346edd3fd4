import { createLibrarian, librarianFamily } from '../../../src/tools/librarian/family';
import { createMemoryLogger } from '../../../src/log/logger';
import { namedCaller, OWNER } from '../../../src/principal';
import { callTool, configOf, tempNode, toolContext } from '../../support/librarianHarness';

const clock = () => new Date('2026-11-21T12:00:00Z');

describe('librarian knowledge and learnings', () => {
  let node: ReturnType<typeof tempNode>;
  beforeEach(() => {
    node = tempNode('librarian', { clock });
  });
  afterEach(() => node.cleanup());

  const librarianOn = () =>
    createLibrarian({
      config: configOf({ embedding: { provider: 'none' } }),
      dataDir: node.dataDir,
      stores: node.stores,
      logger: createMemoryLogger(),
    });

  it('finds saved knowledge again by keyword, ranked with scores, after the database is reopened', async () => {
    const first = librarianOn();
    const { tools } = first;
    await callTool(tools, 'save_knowledge', {
      kind: 'fact',
      content: 'The staging cluster runs on three nodes in eu-west and is redeployed every night.',
      source: 'ops handbook',
      tags: ['staging', 'cluster'],
    });
    await callTool(tools, 'save_knowledge', {
      kind: 'rule',
      content: 'Never deploy to production on Fridays.',
      tags: ['deploy'],
    });
    await callTool(tools, 'save_knowledge', {
      kind: 'preference',
      content: 'The user prefers answers in British English.',
    });
    await first.close?.();
    await node.reopen();

    const again = librarianOn();
    const found = await callTool(again.tools, 'search_knowledge', { query: 'which cluster do we deploy to staging?' });
    expect(found.results.map((r: { content: string }) => r.content)).toEqual([
      'The staging cluster runs on three nodes in eu-west and is redeployed every night.',
      'Never deploy to production on Fridays.',
    ]);
    expect(found.results[0].score).toBeGreaterThan(found.results[1].score);
    expect(found.results[0]).toMatchObject({ kind: 'fact', source: 'ops handbook', tags: ['staging', 'cluster'] });

    const rules = await callTool(again.tools, 'search_knowledge', { query: 'deploy staging', kinds: ['rule'] });
    expect(rules.results.map((r: { kind: string }) => r.kind)).toEqual(['rule']);
  });

  it('saves learnings and finds them by the error they fix', async () => {
    const { tools } = librarianOn();
    await callTool(tools, 'save_learning', {
      errorPattern: 'SQLITE_BUSY: database is locked',
      diagnosis: 'Two writers without a busy timeout.',
      fix: 'Set PRAGMA busy_timeout = 5000 and use WAL.',
      tags: ['sqlite'],
    });
    await callTool(tools, 'save_learning', {
      errorPattern: 'ECONNREFUSED 127.0.0.1:5432',
      diagnosis: 'Postgres is down.',
      fix: 'Start it.',
    });
    const found = await callTool(tools, 'search_learnings', { query: 'database is locked' });
    expect(found.results).toHaveLength(1);
    expect(found.results[0]).toMatchObject({
      errorPattern: 'SQLITE_BUSY: database is locked',
      fix: 'Set PRAGMA busy_timeout = 5000 and use WAL.',
    });
    expect(found.results[0].score).toBeGreaterThan(0);
  });

  it('records a search that finds nothing as an inquiry, lists it, and dismisses it', async () => {
    const librarian = librarianOn();
    const { tools } = librarian;
    const empty = await callTool(
      tools,
      'search_knowledge',
      { query: 'Who owns the billing service?' },
      toolContext('s-7'),
    );
    expect(empty.results).toEqual([]);
    expect(empty.inquiry).toEqual({ id: expect.any(String), question: 'Who owns the billing service?' });
    // The same gap asked again is one inquiry, not two.
    const again = await callTool(tools, 'search_knowledge', { query: 'who owns the BILLING service' });
    expect(again.inquiry.id).toBe(empty.inquiry.id);
    await callTool(tools, 'search_learnings', { query: 'kafka rebalance storm' });

    const pending = await callTool(tools, 'librarian_pending_inquiries', {});
    expect(
      pending.inquiries.map((i: { question: string; origin: string; sessionId: string | null }) => [
        i.question,
        i.origin,
        i.sessionId,
      ]),
    ).toEqual([
      ['Who owns the billing service?', 'search_knowledge', 's-7'],
      ['kafka rebalance storm', 'search_learnings', 'session-1'],
    ]);
    const asked = { principal: OWNER, sessionId: 's-8', text: 'hi' };
    const hint = await librarian.contextProvider({ ...asked, agentName: 'librarian' });
    expect(hint).toContain('Who owns the billing service?');
    expect(await librarian.contextProvider({ ...asked, agentName: 'operator' })).toBeUndefined();
    // Another caller's pending inquiries never reach this caller's prompt.
    expect(
      await librarian.contextProvider({ ...asked, principal: namedCaller('bearer:peer'), agentName: 'librarian' }),
    ).toBeUndefined();

    const dismissed = await callTool(tools, 'librarian_dismiss_inquiry', {
      id: empty.inquiry.id,
      reason: 'answered by the user',
    });
    expect(dismissed.dismissed).toMatchObject({ status: 'dismissed', reason: 'answered by the user' });
    await expect(callTool(tools, 'librarian_dismiss_inquiry', { id: empty.inquiry.id })).rejects.toThrow(
      /no pending inquiry/,
    );
    const left = await callTool(tools, 'librarian_pending_inquiries', {});
    expect(left.inquiries.map((i: { question: string }) => i.question)).toEqual(['kafka rebalance storm']);
  });

  it('rejects bad arguments through the tool schema', () => {
    const { tools } = librarianOn();
    const save = tools.find((t) => t.name === 'save_knowledge')!;
    expect(save.parameters.safeParse({ kind: 'rumour', content: 'x' }).success).toBe(false);
    expect(save.parameters.safeParse({ kind: 'fact', content: '   ' }).success).toBe(false);
  });

  it('offers graph_* only with graph.enabled and rag_retrieve only with an embedding provider', async () => {
    const names = (input: Parameters<typeof configOf>[0]) =>
      createLibrarian({
        config: configOf(input),
        dataDir: node.dataDir,
        stores: node.stores,
        logger: createMemoryLogger(),
      }).tools.map((t) => t.name);
    const all = names({});
    expect(all).toEqual(
      expect.arrayContaining([
        'save_knowledge',
        'save_learning',
        'search_knowledge',
        'search_learnings',
        'rag_retrieve',
        'graph_query',
        'graph_traverse',
        'graph_add',
        'create_skill',
        'list_skills',
        'librarian_pending_inquiries',
        'librarian_dismiss_inquiry',
      ]),
    );
    const bare = names({
      graph: { enabled: false },
      embedding: { provider: 'none' },
      tools: { skills: { enabled: false } },
    });
    expect(bare.filter((n) => /^(graph_|rag_|create_skill|list_skills)/.test(n))).toEqual([]);
    expect(bare).toContain('search_knowledge');
    expect(librarianFamily.enabled(configOf({}))).toBe(true);
  });
});
