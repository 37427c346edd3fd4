import type { TurnInput } from '../../../src/agent/turn';
import { workflowFamily } from '../../../src/tools/automator/families';
import { OWNER } from '../../../src/principal';
import {
  automatorDeps,
  createGate,
  createRecordingRunner,
  openFamily,
  openStorage,
  useTempDb,
  waitFor,
  type ScriptedAnswer,
} from '../../support/automatorRunner';

interface StepView {
  stepId: string;
  agent: string | null;
  status: string;
  result: string | null;
  author: string | null;
}
interface RunView {
  id: string;
  status: string;
  error: string | null;
  steps: StepView[];
}

const AGENTS = ['lango-orchestrator', 'operator', 'navigator', 'vault', 'librarian', 'automator', 'weather-peer'];

describe('workflow family', () => {
  const temp = useTempDb();

  async function open(respond: (input: TurnInput) => ScriptedAnswer | Promise<ScriptedAnswer>) {
    const runner = createRecordingRunner(respond);
    const storage = openStorage(temp.file);
    const family = await openFamily(workflowFamily, await automatorDeps({ storage }), {
      runner: runner.runner,
      agentNames: AGENTS,
    });
    temp.onCleanup(async () => {
      await family.close();
      await storage.close();
    });
    return { ...family, runner };
  }

  type Opened = Awaited<ReturnType<typeof open>>;
  const status = (wf: Opened, runId: string) => wf.call('workflow_status', { runId }) as Promise<RunView>;
  const finished = (wf: Opened, runId: string) =>
    waitFor(
      async () => {
        const run = await status(wf, runId);
        return run.status !== 'running' && run;
      },
      20_000,
      `run ${runId} to finish`,
    );
  const step = (run: RunView, id: string) => run.steps.find((s) => s.stepId === id) as StepView;
  const inputFor = (wf: Opened, stepId: string) =>
    wf.runner.inputs.find((input) => input.metadata?.workflowStep === stepId) as TurnInput;

  const DIGEST = [
    'name: digest',
    'steps:',
    '  - id: news',
    '    agent: navigator',
    '    prompt: read the front page',
    '  - id: balance',
    '    agent: vault',
    '    prompt: check the wallet balance',
    '  - id: forecast',
    '    agent: weather-peer',
    '    prompt: forecast for tomorrow',
    '  - id: digest',
    '    agent: librarian',
    '    prompt: "Write a digest. News: {{steps.news.result}} Money: {{steps.balance.result}} Weather: {{steps.forecast.result}}"',
    '    depends_on: [news, balance, forecast]',
  ].join('\n');

  it('runs each step on the specialist it names and feeds earlier results into later prompts', async () => {
    const wf = await open((input) => `${String(input.startAgent)} says ${input.text.slice(0, 12)}`);
    const started = await wf.call('workflow_run', { yaml: DIGEST });
    expect(started).toMatchObject({
      workflow: 'digest',
      steps: ['news', 'balance', 'forecast', 'digest'],
      status: 'running',
    });

    const run = await finished(wf, started.runId);
    expect(run.status).toBe('completed');
    expect(wf.runner.inputs.map((input) => [input.metadata?.workflowStep, input.startAgent]).sort()).toEqual([
      ['balance', 'vault'],
      ['digest', 'librarian'],
      ['forecast', 'weather-peer'],
      ['news', 'navigator'],
    ]);
    expect(inputFor(wf, 'news').sessionId).toBe(`workflow:${started.runId}:news`);
    expect(inputFor(wf, 'digest').text).toBe(
      'Write a digest. News: navigator says read the fro Money: vault says check the wa Weather: weather-peer says forecast for',
    );
    expect(run.steps.map((s) => [s.stepId, s.status, s.author])).toEqual([
      ['news', 'completed', 'navigator'],
      ['balance', 'completed', 'vault'],
      ['forecast', 'completed', 'weather-peer'],
      ['digest', 'completed', 'librarian'],
    ]);
  });

  it('runs independent steps in parallel and a dependent step only after all it depends on', async () => {
    const gates = new Map<string, ReturnType<typeof createGate>>();
    const wf = await open(async (input) => {
      const id = String(input.metadata?.workflowStep);
      const gate = createGate();
      gates.set(id, gate);
      await gate.opened;
      return `${id} done`;
    });
    const { runId } = await wf.call('workflow_run', { yaml: DIGEST });

    await waitFor(() => wf.runner.active === 3, 20_000, 'the three independent steps to run together');
    expect([...gates.keys()].sort()).toEqual(['balance', 'forecast', 'news']);
    gates.get('news')?.open();
    gates.get('balance')?.open();
    // Two of its three inputs are done: the digest step still waits for the third.
    await waitFor(
      async () =>
        (await status(wf, runId)).steps
          .filter((s) => s.status === 'completed')
          .map((s) => s.stepId)
          .sort()
          .join() === 'balance,news',
      20_000,
      'news and balance to complete',
    );
    expect(gates.has('digest')).toBe(false);

    gates.get('forecast')?.open();
    await waitFor(() => gates.has('digest'), 20_000, 'the digest step');
    gates.get('digest')?.open();
    expect((await finished(wf, runId)).status).toBe('completed');
    expect(wf.runner.maxActive).toBe(3);
  });

  it('fails a step that runs past its timeout, skips what depends on it and finishes the other branch', async () => {
    const never = createGate();
    const wf = await open(async (input) => {
      if (input.metadata?.workflowStep === 'slow') await never.opened;
      return 'quick answer';
    });
    const yaml = [
      'name: timeouts',
      'steps:',
      '  - { id: slow, agent: operator, prompt: hang, timeout: 200ms }',
      '  - { id: after, agent: librarian, prompt: "use {{steps.slow.result}}", depends_on: [slow] }',
      '  - { id: other, agent: vault, prompt: independent }',
    ].join('\n');
    const { runId } = await wf.call('workflow_run', { yaml });

    const run = await finished(wf, runId);
    expect(run).toMatchObject({ status: 'failed', error: 'failed steps: slow' });
    expect(step(run, 'slow')).toMatchObject({ status: 'failed', result: 'timed out after 200ms' });
    expect(step(run, 'after')).toMatchObject({ status: 'skipped' });
    expect(step(run, 'other')).toMatchObject({ status: 'completed', result: 'quick answer' });
    expect(inputFor(wf, 'slow').signal?.aborted).toBe(true);
    never.open();
  });

  it('skips every step downstream of a failure, whatever order the YAML lists them in', async () => {
    const wf = await open((input) =>
      input.metadata?.workflowStep === 'base'
        ? { status: 'failed', text: 'model unreachable', author: 'operator' }
        : 'ok',
    );
    const yaml = [
      'name: cascade',
      'steps:',
      '  - { id: last, prompt: three, depends_on: [middle] }',
      '  - { id: middle, prompt: two, depends_on: [base] }',
      '  - { id: base, agent: operator, prompt: one }',
    ].join('\n');
    const { runId } = await wf.call('workflow_run', { yaml });

    const run = await finished(wf, runId);
    expect(run.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['last', 'skipped'],
      ['middle', 'skipped'],
      ['base', 'failed'],
    ]);
    expect(step(run, 'base').result).toBe('model unreachable');
    expect(wf.runner.inputs).toHaveLength(1);
  });

  it('fails a step whose turn asks the user a question, since nobody can answer it', async () => {
    const wf = await open(() => ({ status: 'input-required', text: 'Which account?', author: 'vault' }));
    const { runId } = await wf.call('workflow_run', {
      yaml: 'name: q\nsteps:\n  - { id: pay, agent: vault, prompt: pay the bill }\n',
    });
    const run = await finished(wf, runId);
    expect(step(run, 'pay')).toMatchObject({ status: 'failed', result: expect.stringContaining('Which account?') });
  });

  it('cancels a run: the step under way is aborted and pending steps never start', async () => {
    const gate = createGate();
    const wf = await open(async () => {
      await gate.opened;
      return 'late';
    });
    const yaml =
      'name: c\nsteps:\n  - { id: first, agent: operator, prompt: work }\n  - { id: second, prompt: more, depends_on: [first] }\n';
    const { runId } = await wf.call('workflow_run', { yaml });
    await waitFor(() => wf.runner.active === 1, 20_000, 'the first step');

    expect(await wf.call('workflow_cancel', { runId })).toEqual({ runId, status: 'cancelling' });
    const run = await finished(wf, runId);
    expect(run).toMatchObject({ status: 'cancelled', error: 'cancelled by request' });
    expect(run.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['first', 'cancelled'],
      ['second', 'cancelled'],
    ]);
    expect(wf.runner.inputs).toHaveLength(1);
    expect(wf.runner.inputs[0].signal?.aborted).toBe(true);
    expect(await wf.call('workflow_cancel', { runId })).toMatchObject({ status: 'cancelled', note: 'not running' });
    gate.open();
  });

  it('saves a workflow, runs it by name and lists both', async () => {
    const wf = await open(() => 'ok');
    expect(
      await wf.call('workflow_save', {
        yaml: 'name: nightly\ndescription: backups\nsteps:\n  - { id: backup, agent: operator, prompt: back up }\n',
      }),
    ).toEqual({
      saved: 'nightly',
      steps: ['backup'],
    });
    const { runId } = await wf.call('workflow_run', { name: 'nightly' });
    await finished(wf, runId);

    const listed = await wf.call('workflow_list', {});
    expect(listed.saved).toEqual([expect.objectContaining({ name: 'nightly', description: 'backups' })]);
    expect(listed.runs).toEqual([expect.objectContaining({ id: runId, workflowName: 'nightly', status: 'completed' })]);
    await expect(wf.call('workflow_run', { name: 'missing' })).rejects.toThrow('no saved workflow named "missing"');
  });

  it('refuses bad YAML, unknown agents and cycles before anything runs', async () => {
    const wf = await open(() => 'never');
    await expect(wf.call('workflow_run', { yaml: 'name: x\nsteps: [' })).rejects.toThrow(/^invalid workflow YAML: /);
    await expect(
      wf.call('workflow_run', { yaml: 'name: x\nsteps:\n  - { id: a, agent: ghost, prompt: p }\n' }),
    ).rejects.toThrow('step "a" names agent "ghost", which is not in the agent tree');
    await expect(
      wf.call('workflow_save', {
        yaml: 'name: x\nsteps:\n  - { id: a, prompt: p, depends_on: [b] }\n  - { id: b, prompt: p, depends_on: [a] }\n',
      }),
    ).rejects.toThrow('steps form a cycle: a → b → a');
    expect(wf.runner.inputs).toHaveLength(0);
    expect((await wf.call('workflow_list', {})).runs).toEqual([]);
  });

  it('marks runs left running by a dead process as failed "node restarted" at start', async () => {
    const storage = openStorage(temp.file);
    const store = storage.stores.workflows;
    await store.createRun(
      OWNER,
      { id: 'wf-dead0001', workflowName: 'old', yaml: 'x', startedAt: new Date().toISOString() },
      [{ id: 'a' }, { id: 'b' }],
    );
    await store.startStep('wf-dead0001', 'a', new Date().toISOString());
    await storage.close();

    const wf = await open(() => 'x');
    const run = await status(wf, 'wf-dead0001');
    expect(run).toMatchObject({ status: 'failed', error: 'node restarted' });
    expect(run.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['a', 'failed'],
      ['b', 'cancelled'],
    ]);
  });
});
