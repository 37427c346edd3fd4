import { StreamResponse, type Task } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { errorMessage } from '../errors';
import type { Logger } from '../log/logger';
import { isFinished } from '../protocol/taskStates';
import type { TaskEventLog, TaskKey } from '../store/taskEvents';
import type { TaskScope } from '../store/taskRows';

/**
 * The A2A tasks of one node spread over replicas (issue 16), in A2A terms
 * over the shared task event log (`store/taskEvents.ts`): the replica
 * running a task writes its events; any replica follows them or asks for a
 * cancel. Events are stored as the ProtoJSON of the A2A `StreamResponse`
 * (`{ "statusUpdate": … }`), the form the wire and the SDK agree on.
 *
 * Which tasks' events are written: those someone may watch from elsewhere
 * (`every-state` tasks: a stream, a returnImmediately caller, a webhook).
 * An `on-settle` task (a blocking SendMessage without webhook) is one whose
 * id nobody outside this process knows until it settles, so nothing could
 * follow or cancel it elsewhere; it costs the database no event rows.
 */
export interface ClusterTasks {
  /**
   * Writes one folded event of a live task (the `onFolded` seam of
   * `liveTasks.ts`); resolves once committed. Never rejects: a failure is
   * logged (the task goes on in this process; only followers elsewhere miss it).
   */
  record(folded: { scope: TaskScope; taskId: string; event: AgentExecutionEvent; task: Task }): Promise<void>;
  /**
   * The events of a task running on another replica, from the one after
   * `after` (0: all), until its terminal one or until `signal` aborts.
   */
  follow(
    scope: TaskScope,
    taskId: string,
    options: { after: number; signal?: AbortSignal },
  ): AsyncIterable<{
    seq: number;
    event: AgentExecutionEvent;
  }>;
  /** Asks the replica running the task to cancel it. */
  requestCancel(scope: TaskScope, taskId: string): Promise<void>;
  /** Calls `cancel` for every cancel asked through any replica (the one running the task acts; the others ignore it). */
  onCancel(cancel: (scope: TaskScope, taskId: string) => void): () => void;
}

const keyOf = (scope: TaskScope, taskId: string): TaskKey => ({
  tenant: scope.tenant,
  owner: scope.owner,
  taskId,
});

/** An executor event as stored: the ProtoJSON of the `StreamResponse` carrying it. */
export function eventJson(event: AgentExecutionEvent): unknown {
  return StreamResponse.toJSON({ payload: { $case: event.kind, value: event.data } as StreamResponse['payload'] });
}

/** The executor event a stored `StreamResponse` carries; `undefined` for one that carries none. */
export function eventOfJson(json: unknown): AgentExecutionEvent | undefined {
  const { payload } = StreamResponse.fromJSON(json as Parameters<typeof StreamResponse.fromJSON>[0]);
  return payload ? ({ kind: payload.$case, data: payload.value } as AgentExecutionEvent) : undefined;
}

/**
 * The cluster's tasks over `events`.
 * @example
 * const cluster = createClusterTasks({ events: storage.taskEvents, logger });
 * const live = new LiveTasks({ rows, onFolded: (folded) => folded.writeMode === 'every-state' && cluster.record(folded) });
 */
export function createClusterTasks(options: { events: TaskEventLog; logger: Logger }): ClusterTasks {
  const { events } = options;
  const log = options.logger.child({ component: 'cluster-tasks' });
  return {
    record({ scope, taskId, event, task }) {
      return events
        .append(keyOf(scope, taskId), { event: eventJson(event), terminal: isFinished(task.status?.state) })
        .catch((err) => log.warn('task event not written', { taskId, error: errorMessage(err) }));
    },
    async *follow(scope, taskId, { after, signal }) {
      for await (const record of events.follow(keyOf(scope, taskId), { after, signal })) {
        const event = eventOfJson(record.event);
        if (event) yield { seq: record.seq, event };
      }
    },
    requestCancel: (scope, taskId) => events.requestCancel(keyOf(scope, taskId)),
    onCancel(cancel) {
      return events.onCancel((key) => cancel({ tenant: key.tenant, owner: key.owner }, key.taskId));
    },
  };
}
