import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { createClusterTasks, eventJson, type ClusterTasks } from '../../src/a2a/clusterTasks';
import { newTask, statusUpdate, textPart } from '../../src/a2a/messages';
import { createMemoryLogger } from '../../src/log/logger';
import { openPostgresStorage, type PostgresStorage } from '../../src/store/postgres/storage';
import type { TaskScope } from '../../src/store/taskRows';
import { emptyAllTables, skipWithoutPostgres } from '../support/postgres';
import { useMigratedDatabase } from '../support/postgresSuite';

/**
 * A task's executor events across replicas, in A2A terms: two storages on
 * one throwaway PostgreSQL database stand for two replicas.
 */
if (!skipWithoutPostgres('the A2A tasks across replicas')) {
  describe('A2A task events across replicas', () => {
    /** One database with every schema applied, shared by the suite's tests. */
    const database = useMigratedDatabase();
    const opened: PostgresStorage[] = [];
    beforeEach(() => emptyAllTables(database.url()));
    afterEach(async () => {
      for (const storage of opened.splice(0)) await storage.close();
    });
    const replica = async (replicaId: string): Promise<ClusterTasks> => {
      const logger = createMemoryLogger();
      const storage = await openPostgresStorage({
        url: database.url(),
        cluster: { replicaId, heartbeatMs: 3_600_000, leaseMs: 15_000 },
        logger,
        clock: () => new Date(),
      });
      opened.push(storage);
      return createClusterTasks({ events: storage.taskEvents, logger });
    };

    const scope: TaskScope = { tenant: '', owner: 'bearer:alice' };
    const ids = { taskId: 'task-1', contextId: 'ctx-1' };
    const at = new Date('2026-11-25T20:00:00.000Z');
    const userMessage = {
      messageId: 'm1',
      contextId: ids.contextId,
      taskId: ids.taskId,
      role: Role.ROLE_USER,
      parts: [textPart('hello')],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    /** What a replica's LiveTasks would hand the seam: each event and the task after it. */
    const fold = (cluster: ClusterTasks, events: Array<[AgentExecutionEvent, TaskState]>) =>
      Promise.all(
        events.map(([event, state]) =>
          cluster.record({ scope, taskId: ids.taskId, event, task: newTask(ids, userMessage, state, at) }),
        ),
      );
    const collect = async (cluster: ClusterTasks, after: number) => {
      const seen: Array<{ seq: number; event: AgentExecutionEvent }> = [];
      for await (const followed of cluster.follow(scope, ids.taskId, { after })) seen.push(followed);
      return seen;
    };

    it('gives a follower on B the events folded on A, as the SDK events they were, ending with the task', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const events: Array<[AgentExecutionEvent, TaskState]> = [
        [
          AgentEvent.task(newTask(ids, userMessage, TaskState.TASK_STATE_SUBMITTED, at)),
          TaskState.TASK_STATE_SUBMITTED,
        ],
        [AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_WORKING, at)), TaskState.TASK_STATE_WORKING],
        [
          AgentEvent.artifactUpdate({
            ...ids,
            artifact: {
              artifactId: 'answer',
              name: 'answer',
              description: '',
              parts: [textPart('Hi')],
              metadata: undefined,
              extensions: [],
            },
            append: false,
            lastChunk: true,
            metadata: undefined,
          }),
          TaskState.TASK_STATE_WORKING,
        ],
        [
          AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_COMPLETED, at)),
          TaskState.TASK_STATE_COMPLETED,
        ],
      ];
      void fold(a, events.slice(0, 2));
      const followed = collect(b, 1);
      void fold(a, events.slice(2));
      const seen = await followed;
      expect(seen.map((f) => f.seq)).toEqual([2, 3, 4]);
      expect(seen.map((f) => f.event.kind)).toEqual(['statusUpdate', 'artifactUpdate', 'statusUpdate']);
      expect(seen.map((f) => eventJson(f.event))).toEqual(events.slice(1).map(([event]) => eventJson(event)));
    });

    it('carries a task answered on B after input-required on A on to its end, for a follower on C', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const c = await replica('c');
      // The question is committed before anyone can answer it.
      await fold(a, [
        [
          AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_INPUT_REQUIRED, at, 'which city?')),
          TaskState.TASK_STATE_INPUT_REQUIRED,
        ],
      ]);
      const followed = collect(c, 0);
      void fold(b, [
        [AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_WORKING, at)), TaskState.TASK_STATE_WORKING],
        [
          AgentEvent.statusUpdate(statusUpdate(ids, TaskState.TASK_STATE_COMPLETED, at, 'sunny')),
          TaskState.TASK_STATE_COMPLETED,
        ],
      ]);
      const seen = await followed;
      expect(seen.map((f) => [f.seq, f.event.kind === 'statusUpdate' && f.event.data.status?.state])).toEqual([
        [1, TaskState.TASK_STATE_INPUT_REQUIRED],
        [2, TaskState.TASK_STATE_WORKING],
        [3, TaskState.TASK_STATE_COMPLETED],
      ]);
    });

    it('tells every replica of a cancel asked through another, by scope and task id', async () => {
      const a = await replica('a');
      const c = await replica('c');
      const heard = new Promise<[TaskScope, string]>((resolve) => a.onCancel((s, id) => resolve([s, id])));
      await c.requestCancel(scope, ids.taskId);
      expect(await heard).toEqual([scope, ids.taskId]);
    });
  });
}
