import type { LlmAgent } from '../../../src/agent/agent';
import { createRunner } from '../../../src/agent/runner';
import { runToEnd, type TurnRunner } from '../../../src/agent/turn';
import { backgroundFamily, cronFamily } from '../../../src/tools/automator/families';
import { makeAgent, openStore } from '../../agent/helpers';
import { OWNER } from '../../../src/principal';
import { automatorDeps, createFamily, waitFor } from '../../support/automatorRunner';
import { ScriptedModel, callTool, say, transferTo } from '../../support/scriptedModel';

/**
 * The automator against the real runner (B's createRunner) and a hand-made
 * tree: the family's tools sit on the automator specialist, and the jobs
 * they start run back through the same runner, handed to the family when it
 * starts, as in the node.
 */
describe('automator through the real runner', () => {
  let store: ReturnType<typeof openStore>;
  const closers: (() => Promise<void> | void)[] = [];

  beforeEach(() => {
    store = openStore();
  });

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await store.close();
  });

  async function node(
    family: typeof cronFamily,
    models: { orchestrator: ScriptedModel; operator: ScriptedModel; automator: ScriptedModel },
  ) {
    const opened = await createFamily(family, await automatorDeps({ storage: store.storage }));
    closers.push(opened.close);
    const tree: LlmAgent = makeAgent({
      name: 'lango-orchestrator',
      model: models.orchestrator,
      subAgents: [
        makeAgent({ name: 'operator', model: models.operator, keywords: ['disk'] }),
        makeAgent({ name: 'automator', model: models.automator, tools: opened.instance.tools, keywords: ['schedule'] }),
      ],
    });
    // The tree is built from the family's tools; the family's jobs then run through the runner over that tree.
    const runner: TurnRunner = createRunner({
      tree: { current: () => tree },
      sessions: store.sessions,
      logger: store.logger,
      maxDelegationRounds: 5,
      maxTurnsPerAgent: 10,
    });
    await opened.start({ runner });
    return { runner, ...opened };
  }

  it('schedules a job from a chat turn, then runs it through the orchestrator to the operator in session cron:<name>', async () => {
    const models = {
      orchestrator: new ScriptedModel([transferTo('automator'), transferTo('operator')]),
      automator: new ScriptedModel([
        // Two seconds after the model asks: still to come when cron_add checks it, however busy the machine.
        () =>
          callTool('cron_add', {
            name: 'disk',
            schedule: new Date(Date.now() + 2_000).toISOString(),
            prompt: 'How full is the disk?',
          }),
        say('Scheduled the disk check.'),
      ]),
      operator: new ScriptedModel([say('The disk is 42% full.')]),
    };
    const { runner, call } = await node(cronFamily, models);

    const chat = await runToEnd(runner, { principal: OWNER, sessionId: 'cli:1', text: 'schedule a disk check' });
    expect(chat).toEqual({ status: 'completed', text: 'Scheduled the disk check.', author: 'automator' });
    expect(models.automator.requests[1]?.messages.at(-1)).toMatchObject({
      role: 'tool',
      name: 'cron_add',
      content: expect.stringContaining('"added":"disk"'),
    });

    const [run] = await waitFor(
      async () => {
        const history = (await call('cron_history', { name: 'disk' })) as {
          status: string;
          result: string;
          author: string;
        }[];
        return history[0]?.status === 'completed' && history;
      },
      20_000,
      'the scheduled run',
    );
    expect(run).toMatchObject({ result: 'The disk is 42% full.', author: 'operator' });
    expect(models.orchestrator.requests[1]?.messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'How full is the disk?',
    });
    const messages = await store.sessions.messages(OWNER, 'cron:disk', { visibleOnly: true });
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'How full is the disk?'],
      ['assistant', 'The disk is 42% full.'],
    ]);
    expect(models.operator.remaining + models.orchestrator.remaining + models.automator.remaining).toBe(0);
  });

  it('cancels a background job mid-turn: the abort reaches the model call of the specialist', async () => {
    const models = {
      orchestrator: new ScriptedModel([transferTo('operator')]),
      automator: new ScriptedModel([]),
      operator: new ScriptedModel([{ hang: true }]),
    };
    const { call } = await node(backgroundFamily, models);

    const job = await call('bg_submit', { prompt: 'Clean the disk slowly.' });
    await models.operator.requested(1);
    await call('bg_cancel', { id: job.id });

    await waitFor(async () => (await call('bg_status', { id: job.id })).status === 'cancelled', 20_000, 'cancellation');
    expect(models.operator.requests[0]?.signal.aborted).toBe(true);
    expect(await call('bg_result', { id: job.id })).toMatchObject({
      status: 'cancelled',
      result: 'cancelled by request',
    });
  });
});
