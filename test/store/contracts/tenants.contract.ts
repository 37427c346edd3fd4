import { createMemoryLogger } from '../../../src/log/logger';
import { defaultPrincipals, inTenant, namedCaller, OWNER, visibleOwner, type Principal } from '../../../src/principal';
import type { CronJob } from '../../../src/store/jobs';
import { vectorSearchFor } from '../../../src/tools/librarian/vectorSearch';
import { useStores, type StoresFactory } from './factory';

const now = '2026-05-01T10:00:00.000Z';
const alice = namedCaller('alice');
/** The same caller and the same owner in two tenants, and the node's owner outside any tenant. */
const aliceInA = inTenant(alice, 'acme');
const aliceInB = inTenant(alice, 'beta');
const ownerOfA = inTenant(OWNER, 'acme');
const ownerOfB = inTenant(OWNER, 'beta');

const cronJob = (name: string): Omit<CronJob, 'owner'> => ({
  name,
  kind: 'every',
  schedule: 'every 1h',
  prompt: `run ${name}`,
  status: 'active',
  anchorAt: now,
  nextRunAt: '2026-05-01T11:00:00.000Z',
  lastRunAt: null,
  createdAt: now,
});

/**
 * Tenants (`a2a.tenants`) on every store keyed by principal: what a
 * principal writes in one tenant is invisible from any other — to the same
 * caller, and to the owner of the other tenant — while the same principal in
 * the same tenant finds it. The node's owner outside any tenant (console,
 * CLI) still reads every row.
 */
export function tenantScopeContract(factory: StoresFactory): void {
  describe(`tenants scope every store (${factory.name})`, () => {
    const opened = useStores(factory);
    const stores = () => opened().stores;

    it('keeps conversations per tenant', async () => {
      const { sessions } = stores();
      for (const writer of [aliceInA, ownerOfA]) {
        await sessions.commitTurn(writer, 'chat', [{ role: 'user', content: 'plans for acme', visible: true }], {
          remoteState: {},
        });
        expect(await sessions.messages(writer, 'chat')).toHaveLength(1);
      }
      for (const reader of [aliceInB, ownerOfB, alice]) {
        expect(await sessions.messages(reader, 'chat')).toEqual([]);
        expect(await sessions.list(reader)).toEqual([]);
        expect(await sessions.delete(reader, 'chat')).toBe(false);
      }
      // The owner of acme reads its own conversation, not its callers': nothing crosses a tenant either way.
      expect((await sessions.list(ownerOfA)).map((s) => s.owner)).toEqual(['acme/owner']);
      expect((await sessions.list(OWNER)).map((s) => s.owner).sort()).toEqual(['acme/alice', 'acme/owner']);
    });

    it('keeps memories per tenant', async () => {
      const { memory } = stores();
      await memory.addObservations(aliceInA, 'chat', ['alice prefers tea in acme'], 'observer');
      await memory.addReflection(aliceInA, 'chat', 'acme tea habits', []);
      expect(await memory.recall(aliceInA, 'tea', { limit: 5 })).not.toEqual([]);
      for (const reader of [aliceInB, ownerOfB, ownerOfA, alice]) {
        expect(await memory.recall(reader, 'tea', { limit: 5 })).toEqual([]);
        expect(await memory.observations(reader, { limit: 5 })).toEqual([]);
        expect(await memory.reflections(reader, { limit: 5 })).toEqual([]);
      }
    });

    it('keeps knowledge, learnings and inquiries per tenant', async () => {
      const { knowledge, inquiries } = stores();
      const fact = await knowledge.saveKnowledge(ownerOfA, { kind: 'fact', content: 'acme ships on tuesdays' });
      const learning = await knowledge.saveLearning(aliceInA, {
        errorPattern: 'acme deploy timeout',
        diagnosis: 'slow disk',
        fix: 'retry',
      });
      await inquiries.raise(aliceInA, { question: 'who runs acme billing?', origin: 'search_knowledge' });
      expect(await knowledge.searchKnowledge(ownerOfA, 'tuesdays', { limit: 5 })).toHaveLength(1);
      for (const reader of [aliceInB, ownerOfB, aliceInA, alice]) {
        expect(await knowledge.searchKnowledge(reader, 'tuesdays', { limit: 5 })).toEqual([]);
        expect((await knowledge.knowledgeByIds(reader, [fact.id])).size).toBe(0);
      }
      for (const reader of [aliceInB, ownerOfB, ownerOfA, alice]) {
        expect(await knowledge.searchLearnings(reader, 'timeout', { limit: 5 })).toEqual([]);
        expect((await knowledge.learningsByIds(reader, [learning.id])).size).toBe(0);
        expect(await inquiries.pending(reader, 5)).toEqual([]);
      }
    });

    it('keeps the knowledge graph per tenant', async () => {
      const { graph } = stores();
      await graph.add(aliceInA, [{ subject: 'billing', predicate: 'depends_on', object: 'postgres' }]);
      expect(await graph.neighbours(aliceInA, 'billing', 'both')).toHaveLength(1);
      for (const reader of [aliceInB, ownerOfB, ownerOfA, alice]) {
        expect(await graph.query(reader, { subject: 'billing' }, 5)).toEqual([]);
        expect(await graph.neighbours(reader, 'billing', 'both')).toEqual([]);
      }
    });

    it('keeps embeddings per tenant: a vector search finds only the tenant principal’s rows', async () => {
      const { vectors } = stores();
      await vectors.put('knowledge', 'p1', [
        { id: '1', owner: aliceInA.id, vector: new Float32Array([1, 0]) },
        { id: '2', owner: aliceInB.id, vector: new Float32Array([0, 1]) },
      ]);
      const search = vectorSearchFor({ vectors, provider: 'p1', logger: createMemoryLogger() });
      const ids = async (reader: Principal) =>
        (await search.search('knowledge', new Float32Array([1, 0]), 5, visibleOwner(reader))).hits.map((h) => h.id);
      expect(await ids(aliceInA)).toEqual(['1']);
      expect(await ids(aliceInB)).toEqual(['2']);
      expect(await ids(ownerOfB)).toEqual([]);
      expect(await ids(alice)).toEqual([]);
      search.close();
    });

    it('keeps secrets per tenant', async () => {
      const { vault } = stores();
      await vault.putSecret(ownerOfA, 'API_TOKEN', 'sealed-acme', now);
      expect(await vault.sealedSecret(ownerOfA, 'API_TOKEN')).toBe('sealed-acme');
      for (const reader of [ownerOfB, aliceInA, aliceInB, alice]) {
        expect(await vault.sealedSecret(reader, 'API_TOKEN')).toBeUndefined();
        expect(await vault.listSecrets(reader)).toEqual([]);
        expect(await vault.deleteSecret(reader, 'API_TOKEN')).toBe(false);
      }
      expect(await vault.sealedSecret(OWNER, 'API_TOKEN')).toBeUndefined();
    });

    it('keeps turn timelines per tenant', async () => {
      const { timelines } = stores();
      await timelines.save([
        { id: 'turn-1', sessionId: 'chat', caller: aliceInA.id, startedAt: now, ms: 5, status: 'completed', steps: [] },
      ]);
      expect((await timelines.list(aliceInA, { limit: 5 })).map((t) => t.id)).toEqual(['turn-1']);
      for (const reader of [aliceInB, ownerOfB, ownerOfA, alice])
        expect(await timelines.list(reader, { limit: 5 })).toEqual([]);
    });

    it('keeps payments per tenant', async () => {
      const { ledger } = stores();
      const send = { at: new Date(now), chainId: 8453, token: '0xt', from: '0xw', to: '0xs', amount: '1', units: 1n };
      expect((await ledger.begin(ownerOfA, send, 10n)).ok).toBe(true);
      expect(await ledger.history(ownerOfA, 5)).toHaveLength(1);
      for (const reader of [ownerOfB, aliceInA, aliceInB, alice]) expect(await ledger.history(reader, 5)).toEqual([]);
    });

    it('keeps cron jobs, background prompts, workflows and commands per tenant; a job runs as its tenant principal', async () => {
      const { cron, background, workflows, execJobs } = stores();
      expect(await cron.insert(aliceInA, cronJob('digest'))).toBe(true);
      // The same name in another tenant is another job.
      expect(await cron.insert(aliceInB, cronJob('digest'))).toBe(true);
      await background.insert(aliceInA, { id: 'bg-1', label: null, prompt: 'summarise acme', createdAt: now });
      await workflows.save(aliceInA, { name: 'weekly', description: null, yaml: 'steps: []', savedAt: now });
      await workflows.createRun(aliceInA, { id: 'wf-1', workflowName: 'weekly', yaml: 'steps: []', startedAt: now }, [
        { id: 'one' },
      ]);
      await execJobs.insert(aliceInA, { id: 'cmd-1', command: 'ls', cwd: '/', pid: null, startedAt: now });
      const acmeJob = await cron.get(aliceInA, 'digest');
      expect(acmeJob?.prompt).toBe('run digest');
      // Who the job runs as, from the row: the caller in its tenant.
      expect(defaultPrincipals.byId(acmeJob!.owner)).toMatchObject({
        kind: 'caller',
        id: 'acme/alice',
        tenant: 'acme',
      });
      for (const reader of [aliceInB, ownerOfB, ownerOfA, alice]) {
        expect((await cron.list(reader)).map((j) => j.owner)).not.toContain('acme/alice');
        expect(await background.get(reader, 'bg-1')).toBeUndefined();
        expect(await background.list(reader, { limit: 5 })).toEqual([]);
        expect(await workflows.getSaved(reader, 'weekly')).toBeUndefined();
        expect(await workflows.getRun(reader, 'wf-1')).toBeUndefined();
        expect(await workflows.steps(reader, 'wf-1')).toEqual([]);
        expect(await execJobs.get(reader, 'cmd-1')).toBeUndefined();
        expect(await execJobs.list(reader, 5)).toEqual([]);
      }
    });
  });
}
