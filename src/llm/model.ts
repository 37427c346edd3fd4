/** A tool call the model asked for. `arguments` is the raw JSON text. */
export interface ModelToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One message of the conversation as the model sees it. */
export type ModelMessage =
  | {
      role: 'user';
      content: string;
      /**
       * Set on notes the runtime adds for the model (a sub-agent's `[REJECT]`,
       * a failed remote call): sent as user text, but not what the user typed.
       */
      runtimeNote?: boolean;
      /**
       * A runtime note's advice to the model ("route the request elsewhere"),
       * also at the end of `content`: a model that speaks to the person
       * itself (the offline model) tells what happened and leaves this out.
       */
      advice?: string;
    }
  | { role: 'assistant'; content: string; toolCalls?: ModelToolCall[]; author?: string }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

/** A function offered to the model. */
export interface ModelToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/**
 * One agent an agent may transfer to, with its routing keywords: what the
 * offline model routes by. Real models read the routing table in the
 * instruction; the offline model is given a lookup of these by the
 * composition root (`createOfflineModel({ routes })`).
 */
export interface ModelRoute {
  name: string;
  description: string;
  keywords: string[];
  /** True when this route leads back to the current agent's parent (not a sub-agent). */
  parent?: boolean;
  /** Names of the tools the route's agent owns (empty for remote agents and tool-less ones). */
  toolNames?: string[];
  /** True when the route leads to an agent on another node. */
  remote?: boolean;
}

/** One model call. */
export interface ModelRequest {
  /** The agent on whose behalf the model is called. */
  agentName: string;
  /** The system prompt. */
  instruction: string;
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  signal: AbortSignal;
}

/** What a model streams back for one call. */
export type ModelEvent =
  | { type: 'text_delta'; delta: string }
  | { type: 'tool_call'; call: ModelToolCall }
  | { type: 'usage'; inputTokens: number; outputTokens: number };

/**
 * A model provider: one streamed call. Providers: `openai` (any
 * OpenAI-compatible Chat Completions endpoint) and `offline` (deterministic,
 * no network).
 */
export interface Model {
  readonly name: string;
  stream(request: ModelRequest): AsyncIterable<ModelEvent>;
  /**
   * The same client asking its endpoint for another model (a replay with
   * another model); absent when the provider has only one (the offline model).
   */
  withModel?(name: string): Model;
}
