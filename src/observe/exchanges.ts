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

/** A piece of an exchange as kept, its size, and whether working it out cut something. */
interface Worked<T> {
  kept: T;
  chars: number;
  cut: boolean;
}

/**
 * The tools offered, kept once per list: an agent's list is built once per
 * agent tree (`TreeIndex.toolSpecs`) and offered again on every call, so it
 * is redacted and cut the first time it is seen and shared after that.
 */
export type ToolsSeen = WeakMap<ObservedExchange['tools'], Worked<ModelExchange['tools']>>;

/** What a turn's exchanges are kept with: the node's redactor and the sink's tool lists seen. */
export interface ExchangeKeeping {
  redact: (text: string) => string;
  toolsSeen: ToolsSeen;
}

/**
 * Keeps one turn's model exchanges for the inspector: every text through the
 * node's redactor, tool-call arguments masked as the chat shows them
 * (credential-named keys `•••`), each field cut at
 * {@link EXCHANGE_FIELD_CHARS}, the newest messages that fit in
 * {@link EXCHANGE_CHARS}; once the turn's {@link TURN_EXCHANGE_CHARS} are
 * spent an exchange keeps only its answer, marked `cut`. Each message,
 * system prompt and tool list is worked out once per turn (a turn's calls
 * resend its history every time).
 * @example
 * const keeper = new ExchangeKeeper({ redact: (text) => secrets.redactText(text), toolsSeen: new WeakMap() });
 * timeline.exchanges = [keeper.keep(3, observed)];
 */
export class ExchangeKeeper {
  /** Characters kept so far in the turn. */
  private spent = 0;
  private readonly messages = new WeakMap<ObservedMessage, Worked<ExchangeMessage>>();
  private readonly instructions = new Map<string, Worked<string>>();
  /** Whether something of the exchange being kept was cut. */
  private cut = false;

  constructor(private readonly keeping: ExchangeKeeping) {}

  /** What step `step`'s exchange keeps. */
  keep(step: number, seen: ObservedExchange): ModelExchange {
    this.cut = false;
    const budget = Math.min(TURN_EXCHANGE_CHARS - this.spent, EXCHANGE_CHARS);
    const answer = { text: this.text(seen.answer.text), toolCalls: seen.answer.toolCalls.map((c) => this.call(c)) };
    const answerChars =
      answer.text.length + answer.toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
    const instruction = this.instruction(seen.instruction);
    const tools = this.tools(seen.tools);
    this.cut ||= tools.cut;
    let chars = answerChars + instruction.length + tools.chars;
    if (chars > budget) {
      // The turn's budget is spent (a runaway turn): its answer still shows; what it was sent does not.
      this.spent += answerChars;
      const omittedMessages = seen.messages.length;
      return { step, instruction: '', messages: [], omittedMessages, tools: [], answer, cut: true };
    }
    const messages: ExchangeMessage[] = [];
    // Newest first: what the model saw last matters most; the oldest go when the exchange is full.
    for (let i = seen.messages.length - 1; i >= 0; i--) {
      const message = this.message(seen.messages[i]);
      if (chars + message.chars > budget) break;
      chars += message.chars;
      this.cut ||= message.cut;
      messages.push(message.kept);
    }
    messages.reverse();
    this.spent += chars;
    const omitted = seen.messages.length - messages.length;
    const cut = this.cut || omitted > 0;
    return {
      step,
      instruction,
      messages,
      ...(omitted > 0 ? { omittedMessages: omitted } : {}),
      tools: tools.kept,
      answer,
      ...(cut ? { cut: true } : {}),
    };
  }

  /** A text redacted and cut at `max` (noting that something was cut). */
  private text(value: string, max = EXCHANGE_FIELD_CHARS): string {
    const redacted = this.keeping.redact(value);
    if (redacted.length <= max) return redacted;
    this.cut = true;
    return `${redacted.slice(0, max)}…`;
  }

  private instruction(value: string): string {
    let known = this.instructions.get(value);
    if (!known) {
      known = this.worked(
        () => this.text(value),
        (text) => text.length,
      );
      this.instructions.set(value, known);
    }
    this.cut ||= known.cut;
    return known.kept;
  }

  /** Works a piece out once, noting its size and whether it was cut (told again whenever it is reused). */
  private worked<T>(work: () => T, size: (kept: T) => number): Worked<T> {
    const before = this.cut;
    this.cut = false;
    const kept = work();
    const entry = { kept, chars: size(kept), cut: this.cut };
    this.cut = before || entry.cut;
    return entry;
  }

  /** A tool call: its arguments masked (with the secrets in them redacted), then cut as any text. */
  private call(c: ObservedToolCall): ExchangeToolCall {
    return { id: c.id, name: c.name, arguments: this.text(inspectedArguments(c.arguments, this.keeping.redact)) };
  }

  private message(seen: ObservedMessage): Worked<ExchangeMessage> {
    let known = this.messages.get(seen);
    if (!known) {
      known = this.worked(
        (): ExchangeMessage => ({
          role: seen.role,
          content: this.text(seen.content),
          ...(seen.author !== undefined ? { author: seen.author } : {}),
          ...(seen.name !== undefined ? { name: seen.name } : {}),
          ...(seen.toolCallId !== undefined ? { toolCallId: seen.toolCallId } : {}),
          ...(seen.toolCalls?.length ? { toolCalls: seen.toolCalls.map((c) => this.call(c)) } : {}),
          ...(seen.runtimeNote ? { runtimeNote: true } : {}),
        }),
        (kept) => kept.content.length + (kept.toolCalls ?? []).reduce((n, c) => n + c.arguments.length, 0),
      );
      this.messages.set(seen, known);
    }
    return known;
  }

  private tools(offered: ObservedExchange['tools']): Worked<ModelExchange['tools']> {
    let known = this.keeping.toolsSeen.get(offered);
    if (!known) {
      known = this.worked(
        () =>
          offered.map((tool) => ({
            name: tool.name,
            description: this.text(tool.description, TOOL_TEXT_CHARS),
            parameters: this.text(JSON.stringify(tool.parameters), TOOL_TEXT_CHARS),
          })),
        (tools) => tools.reduce((n, t) => n + t.name.length + t.description.length + t.parameters.length, 0),
      );
      this.keeping.toolsSeen.set(offered, known);
    }
    return known;
  }
}
