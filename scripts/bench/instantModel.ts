import type { Model, ModelEvent, ModelRequest } from '../../src/llm/model';

/** The orchestrator's agent name (see src/orchestration). */
const ORCHESTRATOR = 'lango-orchestrator';

/** What the instant model does for one delegated request. */
export interface InstantModelOptions {
  /** Specialist the orchestrator transfers to. */
  specialist: string;
  /** The one tool the specialist runs, and its JSON arguments. */
  tool: string;
  toolArguments: Record<string, unknown>;
}

/**
 * A model that answers at once, for benchmarks of the delegated path: the
 * orchestrator transfers to `specialist`, the specialist calls `tool` once and
 * then answers with the tool's result. No randomness and no waiting, so the
 * figures measure the node (runtime, tool, store, A2A) and not a model.
 */
export function createInstantModel(options: InstantModelOptions): Model {
  return {
    name: 'instant',
    async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
      const last = request.messages.at(-1);
      if (request.agentName === ORCHESTRATOR) {
        if (last?.role === 'tool' || last?.role === 'assistant') {
          yield { type: 'text_delta', delta: 'done' };
          return;
        }
        const args = JSON.stringify({ agent_name: options.specialist });
        yield {
          type: 'tool_call',
          call: { id: `t${request.messages.length}`, name: 'transfer_to_agent', arguments: args },
        };
        return;
      }
      if (last?.role === 'tool') {
        yield { type: 'text_delta', delta: `result: ${last.content.slice(0, 200)}` };
        return;
      }
      const args = JSON.stringify(options.toolArguments);
      yield { type: 'tool_call', call: { id: `c${request.messages.length}`, name: options.tool, arguments: args } };
    },
  };
}
