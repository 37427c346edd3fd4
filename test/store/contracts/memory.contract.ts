import { namedCaller, OWNER } from '../../../src/principal';
import { useStores, type StoresFactory } from './factory';

const alice = namedCaller('bearer:alice');
const bob = namedCaller('bearer:bob');

/** What every {@link MemoryStore} must do. */
export function memoryStoreContract(factory: StoresFactory): void {
  describe(`memory store (${factory.name})`, () => {
    const opened = useStores(factory, { clock: () => new Date('2026-03-01T10:00:00Z') });
    const memory = () => opened().stores.memory;

    it('keeps observations and reflections per session, newest last, with text ids', async () => {
      const [first, second] = await memory().addObservations(
        OWNER,
        's1',
        ['Prefers tea.', 'Works in Lisbon.'],
        'observer',
      );
      await memory().addObservations(OWNER, 's2', ['Other session.'], 'event');
      expect(typeof first.id).toBe('string');
      expect(first).toMatchObject({ owner: 'owner', sessionId: 's1', origin: 'observer', reflectionId: null });
      expect((await memory().observations(OWNER, { sessionId: 's1', limit: 10 })).map((o) => o.content)).toEqual([
        'Prefers tea.',
        'Works in Lisbon.',
      ]);
      expect(await memory().countUnreflected(OWNER, 's1')).toBe(2);
      const reflection = await memory().addReflection(OWNER, 's1', 'Tea drinker in Lisbon.', [first.id, second.id]);
      expect(reflection).toMatchObject({ sessionId: 's1', observationCount: 2, createdAt: '2026-03-01T10:00:00.000Z' });
      expect(await memory().countUnreflected(OWNER, 's1')).toBe(0);
      expect(await memory().observations(OWNER, { sessionId: 's1', limit: 10, unreflectedOnly: true })).toEqual([]);
      const [marked] = await memory().observations(OWNER, { sessionId: 's1', limit: 1 });
      expect(marked.reflectionId).toBe(reflection.id);
      expect((await memory().reflections(OWNER, { limit: 5 })).map((r) => r.content)).toEqual([
        'Tea drinker in Lisbon.',
      ]);
      expect((await memory().observations(OWNER, { limit: 2 })).map((o) => o.content)).toEqual([
        'Works in Lisbon.',
        'Other session.',
      ]);
    });

    it('recalls by keyword, best first, and finds nothing for unrelated words', async () => {
      await memory().addObservations(OWNER, 's1', ['The deploy freeze starts on December 20.'], 'event');
      await memory().addObservations(OWNER, 's1', ['The user likes green tea.'], 'event');
      const found = await memory().recall(OWNER, 'when is the deploy freeze?', { limit: 5 });
      expect(found.map((m) => m.content)).toEqual(['The deploy freeze starts on December 20.']);
      expect(found[0]).toMatchObject({ type: 'observation' });
      expect(found[0].score).toBeGreaterThan(0);
      expect(await memory().recall(OWNER, 'quantum chromodynamics', { limit: 5 })).toEqual([]);
    });

    it('remembers how far each session was observed', async () => {
      expect(await memory().observedMessages(OWNER, 's1')).toBe(0);
      await memory().setObservedMessages(OWNER, 's1', 4);
      await memory().setObservedMessages(OWNER, 's1', 6);
      expect(await memory().observedMessages(OWNER, 's1')).toBe(6);
      expect(await memory().observedMessages(alice, 's1')).toBe(0);
    });

    it("keeps each caller's memories from every other caller; the owner sees them all, and ownOnly keeps its own", async () => {
      await memory().addObservations(alice, 'ctx', ['Alice is allergic to peanuts.'], 'event');
      await memory().addObservations(bob, 'ctx', ['Bob is allergic to shellfish.'], 'event');
      await memory().addObservations(OWNER, 'ctx', ['The owner is allergic to pollen.'], 'event');
      const recall = async (who: typeof alice, scope = {}) =>
        (await memory().recall(who, 'allergic', { limit: 10, ...scope })).map((m) => m.content).sort();
      expect(await recall(alice)).toEqual(['Alice is allergic to peanuts.']);
      expect(await recall(bob)).toEqual(['Bob is allergic to shellfish.']);
      expect(await recall(OWNER)).toHaveLength(3);
      expect(await recall(OWNER, { ownOnly: true })).toEqual(['The owner is allergic to pollen.']);
      // The same session id is each principal's own session.
      expect((await memory().observations(alice, { sessionId: 'ctx', limit: 10 })).map((o) => o.content)).toEqual([
        'Alice is allergic to peanuts.',
      ]);
      expect((await memory().observations(bob, { limit: 10 })).map((o) => o.owner)).toEqual(['bearer:bob']);
      expect(await memory().observations(OWNER, { limit: 10 })).toHaveLength(3);
      // A reflection absorbs only the principal's own observations, whatever ids it is handed.
      const [bobs] = await memory().observations(bob, { limit: 1 });
      await memory().addReflection(alice, 'ctx', 'Alice: no peanuts.', [bobs.id]);
      expect(await memory().countUnreflected(bob, 'ctx')).toBe(1);
      expect(await memory().reflections(bob, { limit: 10 })).toEqual([]);
      expect((await memory().reflections(OWNER, { limit: 10 })).map((r) => r.owner)).toEqual(['bearer:alice']);
    });
  });
}
