import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { a2aClient, answerText, asTask, describeStream, textRequest } from '../support/a2aClient';
import { rpc } from '../support/cluster';
import { skipWithoutPostgres } from '../support/prerequisites';
import { useReplicaCluster } from '../support/pgReplicas';
import { waitFor } from '../support/waitFor';

/**
 * One owner per task across two replicas (A, B) of one node on one
 * throwaway PostgreSQL database, in this process on 127.0.0.1, one scripted
 * model, one shared workspace: a message that would start a second turn
 * beside a running one is refused through either replica as one node
 * refuses it, and two answers racing for one input-required task run one
 * turn, whichever replicas they reach.
 */

/** A gate a scripted model response waits at. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** A SendMessage's params over JSON-RPC (ProtoJSON), continuing `task` when given. */
const message = (text: string, task?: Task) => ({
  message: {
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    role: 'ROLE_USER',
    parts: [{ text }],
    ...(task ? { taskId: task.id, contextId: task.contextId } : {}),
  },
});

if (!skipWithoutPostgres('one owner per task across replicas')) {
  describe('one owner per task across two replicas on PostgreSQL', () => {
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-owner-'));
    const cluster = useReplicaCluster({
      replicaIds: ['a', 'b'],
      config: { agent: { multiAgent: false }, tools: { exec: { policy: 'ask' }, fs: { root: workspace } } },
    });
    afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }));
    afterEach(() => expect(cluster().model.unexpected).toEqual([]));

    /** The lines the turns' commands appended to `file` in the shared workspace. */
    const lines = (file: string) =>
      fs.existsSync(path.join(workspace, file))
        ? fs.readFileSync(path.join(workspace, file), 'utf8').split('\n').filter(Boolean)
        : [];
    /** A task on A waiting for its caller's yes to a command appending a line to `file`. */
    const askedOnA = async (file: string) => {
      cluster().model.push({ toolCalls: [{ name: 'exec_shell', arguments: { command: `echo once >> ${file}` } }] });
      const [a] = cluster().nodes;
      const asked = asTask(await (await a2aClient(a.url, 'JSONRPC')).sendMessage(textRequest(`append to ${file}`)));
      expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      return asked;
    };
    const stateOn = async (url: string, id: string) =>
      (await (await a2aClient(url, 'JSONRPC')).getTask({ tenant: '', id })).status?.state;

    it('refuses a follow-up through B while the turn works on A exactly as A refuses it; both read it working', async () => {
      const [a, b] = cluster().nodes;
      const asked = await askedOnA('follow-up.txt');
      const held = gate();
      cluster().model.push({ chunks: ['Appended', '.'], before: (i) => (i === 0 ? held.opened : Promise.resolve()) });
      try {
        const answering = rpc(a.url, 'SendMessage', message('yes', asked));
        await waitFor(() => lines('follow-up.txt').length === 1, 20_000, 'the approved command to run on A');
        expect(await stateOn(a.url, asked.id)).toBe(TaskState.TASK_STATE_WORKING);
        expect(await stateOn(b.url, asked.id)).toBe(TaskState.TASK_STATE_WORKING);

        const viaB = await rpc(b.url, 'SendMessage', message('and again', asked));
        const viaA = await rpc(a.url, 'SendMessage', message('and again', asked));
        expect(viaB.body.error?.message).toBe(
          `task ${asked.id} is still working: wait for its answer or cancel it first`,
        );
        expect(viaB.status).toBe(viaA.status);
        expect(viaB.body.error).toEqual(viaA.body.error);
        // Over HTTP+JSON the same refusal, from B.
        await expect(
          (await a2aClient(b.url, 'HTTP+JSON')).sendMessage(
            textRequest('and again', { taskId: asked.id, contextId: asked.contextId }),
          ),
        ).rejects.toThrow(/still working: wait for its answer or cancel it first/);

        held.open();
        const answered = (await answering).body.result?.task as { status?: { state?: string } } | undefined;
        expect(answered?.status?.state).toBe('TASK_STATE_COMPLETED');
      } finally {
        held.open();
      }
      expect(lines('follow-up.txt')).toEqual(['once']);
      const onA = await (await a2aClient(a.url, 'JSONRPC')).getTask({ tenant: '', id: asked.id });
      const onB = await (await a2aClient(b.url, 'HTTP+JSON')).getTask({ tenant: '', id: asked.id });
      expect(onB).toEqual(onA);
      expect(answerText(onA)).toBe('Appended.');
    });

    it('runs one turn when A and B race to answer one input-required task: its command runs once', async () => {
      const [a, b] = cluster().nodes;
      const asked = await askedOnA('race.txt');
      const held = gate();
      cluster().model.push({ chunks: ['Appended', '.'], before: (i) => (i === 0 ? held.opened : Promise.resolve()) });
      try {
        const answers = [a, b].map((node) => rpc(node.url, 'SendMessage', message('yes', asked)));
        // The loser is refused at once; the winner's turn holds at the gate.
        const refused = await Promise.race(answers);
        expect(refused.body.error?.message).toBe(
          `task ${asked.id} is still working: wait for its answer or cancel it first`,
        );
        held.open();
        const [onA, onB] = await Promise.all(answers);
        const results = [onA, onB].filter((answer) => answer.body.result);
        expect(results).toHaveLength(1);
        expect((results[0].body.result?.task as { status?: { state?: string } }).status?.state).toBe(
          'TASK_STATE_COMPLETED',
        );
      } finally {
        held.open();
      }
      expect(lines('race.txt')).toEqual(['once']);
    });

    it('streams an answer through B to a task that asked its caller on A: working first, then the turn to its end', async () => {
      const [, b] = cluster().nodes;
      const asked = await askedOnA('stream.txt');
      cluster().model.push({ chunks: ['Appended', ' on B.'] });
      const events: StreamResponse[] = [];
      const stream = (await a2aClient(b.url, 'HTTP+JSON')).sendMessageStream(
        textRequest('yes', { taskId: asked.id, contextId: asked.contextId }),
      );
      for await (const event of stream) events.push(event);
      const states = describeStream(events);
      expect(states[0]).toBe(`task:${TaskState.TASK_STATE_WORKING}`);
      expect(states.at(-1)).toBe(`status:${TaskState.TASK_STATE_COMPLETED}`);
      expect(lines('stream.txt')).toEqual(['once']);
    });

    it('cancels through B a task waiting on A for its caller: an answer after it finds it ended, on either replica', async () => {
      const [a, b] = cluster().nodes;
      const asked = await askedOnA('canceled.txt');
      const canceled = await (
        await a2aClient(b.url, 'HTTP+JSON')
      ).cancelTask({
        tenant: '',
        id: asked.id,
        metadata: undefined,
      });
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      const viaA = await rpc(a.url, 'SendMessage', message('yes', asked));
      const viaB = await rpc(b.url, 'SendMessage', message('yes', asked));
      expect(viaA.body.error?.message).toMatch(/is in a terminal state/);
      expect(viaB.body.error).toEqual(viaA.body.error);
      expect(await stateOn(a.url, asked.id)).toBe(TaskState.TASK_STATE_CANCELED);
      expect(lines('canceled.txt')).toEqual([]);
    });
  });
}
