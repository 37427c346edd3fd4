import type { RemoteAgent, RemoteInvocation, RemoteOutcome } from './agent';
import type { Logger } from '../log/logger';
import { RunEvents, type RunEvent } from './events';
import { errorMessage, AbortError, raceAbort } from '../errors';
import { NOOP_OBSERVATION, type Observation } from '../observation/observer';

/**
 * Calls a remote A2A agent for one request, relaying the events it yields.
 * `state` is the session's opaque state for this remote; the remote updates
 * it in place and the runner persists it after the call. A remote that
 * throws is reported as `failed` so the orchestrator can route elsewhere.
 * The call is observed under `parent` (the remote agent's step); the remote
 * agent adds its hops and sends the observation's trace context.
 */
export async function* callRemote(
  remote: RemoteAgent,
  invocation: RemoteInvocation,
  logger: Logger,
  parent: Observation = NOOP_OBSERVATION,
): AsyncGenerator<RunEvent, RemoteOutcome> {
  const observation = parent.child('remote', remote.name, { agent: remote.name, peer: remote.name });
  yield RunEvents.remoteCall(remote.name, 'started');
  try {
    const run = remote.invoke({ ...invocation, observation });
    for (;;) {
      const step = await raceAbort(run.next(), invocation.signal);
      if (step.done) {
        const account = step.value.account;
        // What the remote spent, by its own account: per-remote tokens, and its tree under this call.
        observation.set({
          status: step.value.status,
          ...(account ? { inputTokens: account.total.input, outputTokens: account.total.output } : {}),
        });
        if (account) observation.nest?.(account);
        observation.end(step.value.status === 'failed' ? step.value.reason : undefined);
        yield RunEvents.remoteCall(
          remote.name,
          step.value.status,
          step.value.status === 'failed' ? step.value.reason : undefined,
        );
        return step.value;
      }
      yield step.value;
    }
  } catch (err) {
    observation.end(invocation.signal.aborted ? 'aborted' : errorMessage(err));
    if (invocation.signal.aborted) throw new AbortError();
    const reason = errorMessage(err);
    logger.warn('remote agent call failed', { agent: remote.name, error: reason });
    yield RunEvents.remoteCall(remote.name, 'failed', reason);
    return { status: 'failed', reason };
  }
}
