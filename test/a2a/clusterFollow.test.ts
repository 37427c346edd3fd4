import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { applyEvent } from '../../src/a2a/tasks/applyEvent';
import { a2aClient, answerText, asTask, textRequest } from '../support/a2aClient';
import { skipWithoutPostgres } from '../support/prerequisites';
import { useReplicaCluster } from '../support/pgReplicas';
import { waitFor } from '../support/waitFor';

/**
 * One node as two replicas (A, B) on one throwaway PostgreSQL database, in
 * this process on 127.0.0.1, reached by the real SDK client: a task running
 * on A is followed, answered and notified about as one node's, whichever
 * replica the caller reaches.
 */

/** A webhook receiver on loopback that counts what it is sent. */
async function webhookReceiver() {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A pushed event's state (`artifact` for an answer chunk). */
const pushedState = (body: string): string => {
  const event = JSON.parse(body) as Record<string, { status?: { state?: string } } | undefined>;
  return event.task?.status?.state ?? event.statusUpdate?.status?.state ?? (event.artifactUpdate ? 'artifact' : '?');
};

/** A stream's events as the executor events they carry, folded onto the task it started with. */
function foldStream(responses: StreamResponse[]): Task | undefined {
  let task: Task | undefined;
  for (const { payload } of responses) {
    if (!payload || payload.$case === 'message') continue;
    if (payload.$case === 'task') {
      task = structuredClone(payload.value);
      continue;
    }
    const event = (
      payload.$case === 'statusUpdate'
        ? AgentEvent.statusUpdate(payload.value)
        : AgentEvent.artifactUpdate(payload.value)
    ) as AgentExecutionEvent;
    task = applyEvent(task, event, task!.history[0]!);
  }
  return task;
}

/** A gate a scripted model response waits at. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

if (!skipWithoutPostgres('one node across replicas')) {
  describe('one node across two replicas on PostgreSQL', () => {
    const cluster = useReplicaCluster({
      replicaIds: ['a', 'b'],
      config: {
        agent: { multiAgent: false },
        tools: { exec: { policy: 'ask' } },
        a2a: { pushNotifications: { allowPrivateNetworks: true, maxAttempts: 1 } },
      },
    });

    it('resubscribes on B to a stream running on A: the task as it stands, then every later event, no gap', async () => {
      const [a, b] = cluster().nodes;
      const held = gate();
      cluster().model.push({
        chunks: ['one ', 'two ', 'three'],
        before: (i) => (i === 1 ? held.opened : Promise.resolve()),
      });
      const onA: StreamResponse[] = [];
      const stream = (await a2aClient(a.url, 'JSONRPC')).sendMessageStream(textRequest('count to three'));
      try {
        for await (const response of stream) {
          onA.push(response);
          if (response.payload?.$case === 'artifactUpdate') break;
        }
        const first = onA[0].payload;
        const taskId = first?.$case === 'task' ? first.value.id : '';
        expect(taskId).not.toBe('');

        // How soon B's first event comes is the bench's resubscribeElsewhere figure.
        const onBClient = await a2aClient(b.url, 'HTTP+JSON');
        const resubscribed = onBClient.resubscribeTask({ tenant: '', id: taskId });
        const onB: StreamResponse[] = [];
        const firstOnB = await resubscribed.next();
        onB.push(firstOnB.value as StreamResponse);
        expect(onB[0].payload?.$case).toBe('task');
        const standing = onB[0].payload?.$case === 'task' ? onB[0].payload.value : undefined;
        // What A had streamed before B came is in the task B starts from.
        expect(answerText(standing!)).toBe('one ');

        held.open();
        for await (const response of resubscribed) onB.push(response);
        const final = foldStream(onB);
        expect(final?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(answerText(final!)).toBe('one two three');
        const stored = await (await a2aClient(a.url, 'JSONRPC')).getTask({ tenant: '', id: taskId });
        expect(answerText(final!)).toBe(answerText(stored));
        // Every event after the first reached B once: the artifact chunks B saw rebuild the answer exactly.
        expect(onB.filter((r) => r.payload?.$case === 'artifactUpdate').length).toBeGreaterThanOrEqual(2);
      } finally {
        held.open();
        await stream.return(undefined);
      }
    });

    it('answers an input-required task from A through B: B continues the turn from the shared session', async () => {
      const [a, b] = cluster().nodes;
      cluster().model.push(
        { toolCalls: [{ name: 'exec_shell', arguments: { command: 'echo approved-on-b' } }] },
        { text: 'The command ran.' },
      );
      const asked = asTask(await (await a2aClient(a.url, 'JSONRPC')).sendMessage(textRequest('run the command')));
      expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

      const answered = asTask(
        await (
          await a2aClient(b.url, 'HTTP+JSON')
        ).sendMessage(textRequest('yes', { taskId: asked.id, contextId: asked.contextId })),
      );
      expect(answered.id).toBe(asked.id);
      expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(answerText(answered)).toBe('The command ran.');
      // B ran the call A had held for approval, and told the model its output.
      const lastCall = cluster().model.requests.at(-1)!.body.messages;
      expect(lastCall.some((m) => m.role === 'tool' && String(m.content).includes('approved-on-b'))).toBe(true);
      const onA = await (await a2aClient(a.url, 'JSONRPC')).getTask({ tenant: '', id: asked.id });
      expect(onA.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

    it('delivers each push notification of a task running on A once, whatever B is asked about it', async () => {
      const [a, b] = cluster().nodes;
      const hook = await webhookReceiver();
      const held = gate();
      cluster().model.push({ chunks: ['pushed ', 'once'], before: (i) => (i === 1 ? held.opened : Promise.resolve()) });
      try {
        const started = asTask(
          await (
            await a2aClient(a.url, 'JSONRPC')
          ).sendMessage(
            textRequest(
              'notify me',
              {},
              {
                returnImmediately: true,
                taskPushNotificationConfig: { id: 'hook', url: hook.url, token: 'hook-token' },
              },
            ),
          ),
        );
        const onB = await a2aClient(b.url, 'HTTP+JSON');
        const followed = (async () => {
          const seen: StreamResponse[] = [];
          for await (const response of onB.resubscribeTask({ tenant: '', id: started.id })) seen.push(response);
          return seen;
        })();
        await onB.getTask({ tenant: '', id: started.id });
        held.open();
        const seen = await followed;
        expect(foldStream(seen)?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        await onB.getTask({ tenant: '', id: started.id });
        await waitFor(
          () => hook.bodies.some((b) => pushedState(b) === 'TASK_STATE_COMPLETED'),
          20_000,
          'the completed push',
        );
        // B had its chance: it holds no live copy of the task and pushes, if at all, as it relays an event; it
        // relayed the completion (its stream ended with it) and answered for the task since, and A's completed
        // push has arrived.
        const states = hook.bodies.map(pushedState);
        expect(states.filter((s) => s === 'TASK_STATE_COMPLETED')).toHaveLength(1);
        expect(new Set(hook.bodies).size).toBe(hook.bodies.length);
      } finally {
        held.open();
        await hook.close();
      }
    });
  });
}
