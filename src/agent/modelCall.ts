import type { ModelRequest, ModelToolCall, Model } from '../llm/model';
import type { Logger } from '../log/logger';
import { RunEvents, type RunEvent } from './events';
import { errorMessage, AbortError, raceAbort } from '../errors';
import { NOOP_OBSERVATION, type Observation } from '../observe/observer';

/** What one model call produced: its text and the tool calls it asked for, or why it failed. */
export type ModelReply = { ok: true; text: string; toolCalls: ModelToolCall[] } | { ok: false; reason: string };

/**
 * Streams one model call, yielding its text as `text_delta` events. A
 * provider error becomes `{ ok: false, reason }` (its message, never a
 * stack); cancellation throws {@link AbortError}. The call is observed
 * under `step` (the acting agent's step) with the tokens it used.
 */
export async function* callModel(
  model: Model,
  request: ModelRequest,
  logger: Logger,
  step: Observation = NOOP_OBSERVATION,
): AsyncGenerator<RunEvent, ModelReply> {
  let text = '';
  const toolCalls: ModelToolCall[] = [];
  const observation = step.child('model', model.name, { agent: request.agentName, model: model.name });
  const usage = { inputTokens: 0, outputTokens: 0 };
  const ended = (error?: string) => {
    observation.set(usage);
    observation.end(error);
  };
  try {
    // Each step is raced with the signal: a provider that ignores it cannot hold a cancelled turn open.
    const events = model.stream(request)[Symbol.asyncIterator]();
    for (;;) {
      const next = await raceAbort(events.next(), request.signal).catch((err: unknown) => {
        if (request.signal.aborted) void Promise.resolve(events.return?.()).catch(() => {});
        throw err;
      });
      if (next.done) break;
      const event = next.value;
      switch (event.type) {
        case 'text_delta':
          if (!event.delta) break;
          text += event.delta;
          yield RunEvents.textDelta(request.agentName, event.delta);
          break;
        case 'tool_call':
          toolCalls.push({ ...event.call, id: event.call.id || `call_${toolCalls.length + 1}` });
          break;
        case 'usage':
          usage.inputTokens += event.inputTokens;
          usage.outputTokens += event.outputTokens;
          logger.debug('model usage', {
            agent: request.agentName,
            input: event.inputTokens,
            output: event.outputTokens,
          });
          break;
      }
    }
  } catch (err) {
    ended(request.signal.aborted ? 'aborted' : errorMessage(err));
    if (request.signal.aborted) throw new AbortError();
    const reason = errorMessage(err);
    logger.warn('model call failed', { agent: request.agentName, model: model.name, error: reason });
    return { ok: false, reason: `the model failed: ${reason}` };
  }
  ended(request.signal.aborted ? 'aborted' : undefined);
  if (request.signal.aborted) throw new AbortError();
  return { ok: true, text, toolCalls };
}
