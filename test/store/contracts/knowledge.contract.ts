import { namedCaller, OWNER } from '../../../src/principal';
import { useStores, type StoresFactory } from './factory';

const alice = namedCaller('bearer:alice');
const bob = namedCaller('bearer:bob');

/** What every {@link KnowledgeStore} and {@link InquiryStore} must do. */
export function knowledgeStoreContract(factory: StoresFactory): void {
  describe(`knowledge and inquiry stores (${factory.name})`, () => {
    const opened = useStores(factory, { clock: () => new Date('2026-11-21T12:00:00Z') });
    const knowledge = () => opened().stores.knowledge;
    const inquiries = () => opened().stores.inquiries;

    it('saves knowledge and learnings and finds them by keyword, ranked, across a restart', async () => {
      const saved = await knowledge().saveKnowledge(OWNER, {
        kind: 'fact',
        content: 'The staging cluster runs on three nodes.',
        source: 'ops handbook',
        tags: ['staging'],
      });
      expect(saved).toMatchObject({
        owner: 'owner',
        kind: 'fact',
        tags: ['staging'],
        createdAt: '2026-11-21T12:00:00.000Z',
      });
      expect(typeof saved.id).toBe('string');
      await knowledge().saveKnowledge(OWNER, { kind: 'rule', content: 'Never deploy on Fridays.' });
      await knowledge().saveLearning(OWNER, {
        errorPattern: 'SQLITE_BUSY: database is locked',
        diagnosis: 'Two writers.',
        fix: 'Set busy_timeout.',
      });
      const reopened = (await opened().reopen()).knowledge;
      const found = await reopened.searchKnowledge(OWNER, 'staging cluster nodes', { limit: 5 });
      expect(found.map((k) => k.content)).toEqual(['The staging cluster runs on three nodes.']);
      expect(found[0].score).toBeGreaterThan(0);
      expect(await reopened.searchKnowledge(OWNER, 'deploy', { limit: 5, kinds: ['fact'] })).toEqual([]);
      const learnings = await reopened.searchLearnings(OWNER, 'database is locked', { limit: 5 });
      expect(learnings.map((l) => l.fix)).toEqual(['Set busy_timeout.']);
      const byId = await reopened.knowledgeByIds(OWNER, [saved.id, '999999']);
      expect([...byId.keys()]).toEqual([saved.id]);
    });

    it('lists the rows waiting for an embedding after a cursor, whose they are, until a vector exists', async () => {
      const a = await knowledge().saveKnowledge(alice, { kind: 'fact', content: 'alpha' });
      const b = await knowledge().saveKnowledge(OWNER, { kind: 'fact', content: 'beta' });
      const pending = await knowledge().unembedded('knowledge', 'p1', undefined, 10);
      expect(pending.map((p) => [p.id, p.owner])).toEqual([
        [a.id, 'bearer:alice'],
        [b.id, 'owner'],
      ]);
      expect(pending[0].text).toContain('alpha');
      expect((await knowledge().unembedded('knowledge', 'p1', a.id, 10)).map((p) => p.id)).toEqual([b.id]);
      await opened().stores.vectors.put('knowledge', 'p1', [
        { id: a.id, owner: 'bearer:alice', vector: new Float32Array([1, 0]) },
      ]);
      expect((await knowledge().unembedded('knowledge', 'p1', undefined, 10)).map((p) => p.id)).toEqual([b.id]);
      expect(await knowledge().unembedded('knowledge', 'p2', undefined, 10)).toHaveLength(2);
      expect(await knowledge().unembedded('learnings', 'p1', undefined, 10)).toEqual([]);
    });

    it("keeps each caller's knowledge from every other caller; the owner finds everyone's", async () => {
      const mine = await knowledge().saveKnowledge(alice, {
        kind: 'fact',
        content: 'The vault code is in the red binder.',
      });
      await knowledge().saveLearning(alice, { errorPattern: 'binder jammed', diagnosis: 'old', fix: 'oil it' });
      expect(await knowledge().searchKnowledge(bob, 'vault code binder', { limit: 5 })).toEqual([]);
      expect(await knowledge().searchLearnings(bob, 'binder jammed', { limit: 5 })).toEqual([]);
      expect((await knowledge().knowledgeByIds(bob, [mine.id])).size).toBe(0);
      expect((await knowledge().searchKnowledge(alice, 'vault code binder', { limit: 5 })).map((k) => k.id)).toEqual([
        mine.id,
      ]);
      expect((await knowledge().searchKnowledge(OWNER, 'vault code binder', { limit: 5 })).map((k) => k.owner)).toEqual(
        ['bearer:alice'],
      );
      expect((await knowledge().learningsByIds(OWNER, [])).size).toBe(0);
    });

    it("lists the newest knowledge first: a caller's own, the owner's own or everyone's", async () => {
      const first = await knowledge().saveKnowledge(alice, { kind: 'fact', content: 'Alice likes tea.' });
      const second = await knowledge().saveKnowledge(OWNER, { kind: 'rule', content: 'Deploy on Tuesdays.' });
      const third = await knowledge().saveKnowledge(alice, { kind: 'preference', content: 'Alice prefers mornings.' });
      const ids = (entries: { id: string }[]) => entries.map((e) => e.id);
      expect(ids(await knowledge().recentKnowledge(alice, { limit: 10 }))).toEqual([third.id, first.id]);
      expect(ids(await knowledge().recentKnowledge(bob, { limit: 10 }))).toEqual([]);
      expect(ids(await knowledge().recentKnowledge(OWNER, { limit: 10 }))).toEqual([third.id, second.id, first.id]);
      expect(ids(await knowledge().recentKnowledge(OWNER, { limit: 10, ownOnly: true }))).toEqual([second.id]);
      expect(ids(await knowledge().recentKnowledge(OWNER, { limit: 1 }))).toEqual([third.id]);
      expect((await knowledge().recentKnowledge(alice, { limit: 1 }))[0]).toEqual(third);
    });

    it('records one pending inquiry per question and principal, and dismisses it once', async () => {
      const first = await inquiries().raise(OWNER, {
        question: 'Who owns billing?',
        origin: 'search_knowledge',
        sessionId: 's',
      });
      const again = await inquiries().raise(OWNER, { question: 'who OWNS  billing', origin: 'search_knowledge' });
      expect(again.id).toBe(first.id);
      const theirs = await inquiries().raise(alice, { question: 'Who owns billing?', origin: 'search_knowledge' });
      expect(theirs.id).not.toBe(first.id);
      expect((await inquiries().pending(alice, 10)).map((i) => i.id)).toEqual([theirs.id]);
      expect(await inquiries().pending(bob, 10)).toEqual([]);
      expect((await inquiries().pending(OWNER, 10)).map((i) => i.id)).toEqual([first.id, theirs.id]);
      expect((await inquiries().pending(OWNER, 10, { ownOnly: true })).map((i) => i.id)).toEqual([first.id]);
      expect(await inquiries().dismiss(bob, theirs.id)).toBeUndefined();
      expect(await inquiries().dismiss(alice, theirs.id, 'answered')).toMatchObject({
        status: 'dismissed',
        reason: 'answered',
      });
      expect(await inquiries().dismiss(alice, theirs.id)).toBeUndefined();
      expect(await inquiries().dismiss(OWNER, 'not-an-id')).toBeUndefined();
      expect(await inquiries().dismiss(OWNER, first.id)).toMatchObject({ status: 'dismissed', reason: null });
    });
  });
}
