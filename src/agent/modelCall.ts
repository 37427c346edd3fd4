import type { ModelEvent, ModelRequest, ModelToolCall, Model } from '../llm/model';
import type { Logger } from '../log/logger';
import { RunEvents, type RunEvent, type TextDeltaEvent } from './events';
import { errorMessage, AbortError } from '../errors';
import { NOOP_OBSERVATION, type Observation } from '../observation/observer';

/** What one model call produced: its text and the tool calls it asked for, or why it failed. */
export type ModelReply = { ok: true; text: string; toolCalls: ModelToolCall[] } | { ok: false; reason: string };

/**
 * Streams one model call, yielding its text as `text_delta` events, or
 * handing them to `onTextDelta` when given (the turn's sink: then nothing
 * is yielded per chunk). A provider error becomes `{ ok: false, reason }`
 * (its message, never a stack); cancellation throws {@link AbortError}.
 * The call is observed under `step` (the acting agent's step) with the
 * tokens it used and its exchange (what it was sent and answered).
 */
export async function* callModel(
  model: Model,
  request: ModelRequest,
  logger: Logger,
  step: Observation = NOOP_OBSERVATION,
  onTextDelta?: (event: TextDeltaEvent) => void,
): AsyncGenerator<RunEvent, ModelReply> {
  let text = '';
  const toolCalls: ModelToolCall[] = [];
  const observation = step.child('model', model.name, { agent: request.agentName, model: model.name });
  const usage = { inputTokens: 0, outputTokens: 0 };
  const ended = (error?: string) => {
    observation.set(usage);
    // By reference: a sink that keeps it (the console's inspector) copies, redacts and caps it.
    observation.exchange?.({
      instruction: request.instruction,
      messages: request.messages,
      tools: request.tools,
      answer: { text, toolCalls },
    });
    observation.end(error);
  };
  // Each step is raced with the signal: a provider that ignores it cannot hold a cancelled turn open.
  let events: AbortableSteps<ModelEvent> | undefined;
  try {
    events = new AbortableSteps(model.stream(request)[Symbol.asyncIterator](), request.signal);
    for (;;) {
      const next = await events.next();
      if (next.done) break;
      const event = next.value;
      switch (event.type) {
        case 'text_delta':
          if (!event.delta) break;
          text += event.delta;
          if (onTextDelta) onTextDelta(RunEvents.textDelta(request.agentName, event.delta));
          else yield RunEvents.textDelta(request.agentName, event.delta);
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
  } finally {
    events?.close();
  }
  ended(request.signal.aborted ? 'aborted' : undefined);
  if (request.signal.aborted) throw new AbortError();
  return { ok: true, text, toolCalls };
}

/**
 * A model's event stream whose every step is raced with the turn's signal,
 * through one abort listener for the whole call (a listener added and
 * removed per event, and the promises and closures around it, were most of
 * the garbage a streamed chunk made in this layer). On abort the step being
 * awaited rejects with {@link AbortError} and the stream is told to stop.
 */
class AbortableSteps<T> {
  /** Rejects the step being awaited, while one is. */
  private rejectStep: ((err: unknown) => void) | undefined;
  private readonly onAbort = () => {
    this.rejectStep?.(new AbortError());
    void Promise.resolve(this.events.return?.()).catch(() => {});
  };

  constructor(
    private readonly events: AsyncIterator<T>,
    private readonly signal: AbortSignal,
  ) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  next(): Promise<IteratorResult<T>> {
    if (this.signal.aborted) return Promise.reject(new AbortError());
    const step = this.events.next();
    return new Promise((resolve, reject) => {
      this.rejectStep = reject;
      step.then(resolve, reject);
    });
  }

  /** The call is over: no abort is listened for any more. */
  close(): void {
    this.rejectStep = undefined;
    this.signal.removeEventListener('abort', this.onAbort);
  }
}
