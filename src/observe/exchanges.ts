import { inspectedArguments } from '../agent/argumentPreview';
import type { ObservedExchange, ObservedMessage, ObservedToolCall } from '../observation/observer';
import type { ExchangeMessage, ExchangeToolCall, ModelExchange } from '../store/timelines';

/** Longest text kept of one field: a system prompt, a message, an answer, a call's arguments. */
export const EXCHANGE_FIELD_CHARS = 8_000;
/** Most characters one exchange keeps; past it its oldest messages are left out. */
export const EXCHANGE_CHARS = 48_000;
/** Most characters a turn's exchanges keep together; past it an exchange keeps its answer only. */
export const TURN_EXCHANGE_CHARS = 200_000;
/** Longest description and argument schema kept of a tool offered. */
const TOOL_TEXT_CHARS = 1_000;

/** An exchange as kept, and how many characters it costs the turn's budget. */
export interface KeptExchange {
  exchange: ModelExchange;
  chars: number;
}

/**
 * What the model inspector keeps of one model step's exchange: every text
 * through the node's redactor, tool-call arguments masked as the chat shows
 * them (credential-named keys `•••`), each field cut at
 * {@link EXCHANGE_FIELD_CHARS}, the newest messages that fit in
 * {@link EXCHANGE_CHARS}. Past `budget` (what is left of the turn's
 * {@link TURN_EXCHANGE_CHARS}) only the answer is kept, marked `cut`.
 * @example
 * const { exchange, chars } = keepExchange(3, observed, (text) => secrets.redactText(text), 200_000);
 */
export function keepExchange(
  step: number,
  seen: ObservedExchange,
  redact: (text: string) => string,
  budget: number,
): KeptExchange {
  const cut = { any: false };
  const text = (value: string, max = EXCHANGE_FIELD_CHARS) => {
    const redacted = redact(value);
    if (redacted.length <= max) return redacted;
    cut.any = true;
    return `${redacted.slice(0, max)}…`;
  };
  // Arguments masked first (with the secrets in them redacted), then cut as any text.
  const call = (c: ObservedToolCall): ExchangeToolCall => ({
    id: c.id,
    name: c.name,
    arguments: text(inspectedArguments(c.arguments, redact)),
  });
  const answer = { text: text(seen.answer.text), toolCalls: seen.answer.toolCalls.map(call) };
  const answerChars = answer.text.length + answer.toolCalls.reduce((n, c) => n + c.arguments.length + c.name.length, 0);
  const instruction = text(seen.instruction);
  const tools = seen.tools.map((tool) => ({
    name: tool.name,
    description: text(tool.description, TOOL_TEXT_CHARS),
    parameters: text(JSON.stringify(tool.parameters), TOOL_TEXT_CHARS),
  }));
  const toolChars = tools.reduce((n, t) => n + t.name.length + t.description.length + t.parameters.length, 0);
  let chars = answerChars + instruction.length + toolChars;
  if (chars > Math.min(budget, EXCHANGE_CHARS)) {
    // The turn's budget is spent (a runaway turn): its answer still shows; what it was sent does not.
    return {
      exchange: {
        step,
        instruction: '',
        messages: [],
        omittedMessages: seen.messages.length,
        tools: [],
        answer,
        cut: true,
      },
      chars: answerChars,
    };
  }
  const room = Math.min(budget, EXCHANGE_CHARS);
  const messages: ExchangeMessage[] = [];
  // Newest first: what the model saw last matters most; the oldest go when the exchange is full.
  for (let i = seen.messages.length - 1; i >= 0; i--) {
    const kept = message(seen.messages[i], text, call);
    const size = kept.content.length + (kept.toolCalls ?? []).reduce((n, c) => n + c.arguments.length, 0);
    if (chars + size > room) break;
    chars += size;
    messages.push(kept);
  }
  messages.reverse();
  const omitted = seen.messages.length - messages.length;
  if (omitted > 0) cut.any = true;
  return {
    exchange: {
      step,
      instruction,
      messages,
      ...(omitted > 0 ? { omittedMessages: omitted } : {}),
      tools,
      answer,
      ...(cut.any ? { cut: true } : {}),
    },
    chars,
  };
}

function message(
  seen: ObservedMessage,
  text: (value: string) => string,
  call: (c: ObservedToolCall) => ExchangeToolCall,
): ExchangeMessage {
  return {
    role: seen.role,
    content: text(seen.content),
    ...(seen.author !== undefined ? { author: seen.author } : {}),
    ...(seen.name !== undefined ? { name: seen.name } : {}),
    ...(seen.toolCallId !== undefined ? { toolCallId: seen.toolCallId } : {}),
    ...(seen.toolCalls?.length ? { toolCalls: seen.toolCalls.map(call) } : {}),
    ...(seen.runtimeNote ? { runtimeNote: true } : {}),
  };
}
