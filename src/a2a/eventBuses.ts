import { setMaxListeners } from 'node:events';
import { DefaultExecutionEventBusManager, type ExecutionEventBus, type ServerCallContext } from '@a2a-js/sdk/server';

/**
 * The node's execution event buses: the SDK's, except that a task's bus takes
 * any number of listeners. Each SSE subscriber of a task adds listeners to its
 * bus (an `EventTarget`, which warns past ten per event type), so three hundred
 * callers following one task are normal load, not a leak; they are bounded by
 * the connections the server accepts.
 */
export class NodeEventBuses extends DefaultExecutionEventBusManager {
  override createOrGetByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus {
    const bus = super.createOrGetByTaskId(taskId, context);
    setMaxListeners(0, bus as unknown as EventTarget);
    return bus;
  }
}
