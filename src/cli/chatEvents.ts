import { assertNever, type RunEvent } from '../agent/events';
import type { CliIO } from './io';

/**
 * What `lango chat` shows of a turn, whether it ran in this process or on
 * the node over A2A: one small union, rendered for a person or printed one
 * JSON object per line (`--json`).
 */
export type ChatEvent =
  | { type: 'transfer'; from: string; to: string }
  | { type: 'note'; agent: string; text: string }
  | { type: 'tool_call'; agent: string; tool: string; args?: string }
  | { type: 'tool_result'; agent: string; tool: string; ok: boolean; summary: string }
  | { type: 'remote_call'; peer: string; status: string; endpoint?: string; detail?: string }
  | { type: 'text'; agent: string; delta: string }
  | { type: 'answer'; agent: string; text: string }
  | { type: 'question'; agent: string; text: string }
  | { type: 'failed'; text: string }
  | { type: 'cancelled' };

/** How a turn ended, as the chat loop needs to know it. */
export type ChatOutcome = 'completed' | 'input-required' | 'failed' | 'cancelled';

/** The chat view of a runner event; undefined for what a person need not see (an agent starting). */
export function chatEventOf(event: RunEvent): ChatEvent | undefined {
  switch (event.type) {
    case 'agent_start':
      return undefined;
    case 'text_delta':
      return { type: 'text', agent: event.agent, delta: event.delta };
    case 'transfer':
      return { type: 'transfer', from: event.from, to: event.to };
    case 'transfer_refused':
      return { type: 'note', agent: event.from, text: `could not hand over to ${event.to}: ${event.reason}` };
    case 'rejected':
      return { type: 'note', agent: event.agent, text: event.note };
    case 'tool_start':
      return { type: 'tool_call', agent: event.agent, tool: event.tool, args: event.args };
    case 'tool_end':
      return { type: 'tool_result', agent: event.agent, tool: event.tool, ok: event.ok, summary: event.summary };
    case 'remote_call':
      return {
        type: 'remote_call',
        peer: event.agent,
        status: event.status,
        endpoint: event.endpoint,
        detail: event.detail,
      };
    case 'final':
      return { type: 'answer', agent: event.agent, text: event.text };
    case 'input_required':
      return { type: 'question', agent: event.agent, text: event.question };
    default:
      return assertNever(event);
  }
}

/** Renders chat events; `busy` starts the waiting indicator, `end` closes the turn's output. */
export interface ChatRenderer {
  busy(): void;
  event(event: ChatEvent): void;
  end(): void;
}

/** `--json`: each event as one JSON line, nothing else on stdout. Text deltas are left out: the answer carries it all. */
export function createJsonRenderer(io: CliIO): ChatRenderer {
  return {
    busy: () => {},
    event: (event) => {
      if (event.type !== 'text') io.out(JSON.stringify(event) + '\n');
    },
    end: () => {},
  };
}

const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SPINNER_MS = 100;
/** One line of a tool result or detail; the rest is for the model, not the screen. */
const MAX_LINE = 160;

function oneLine(text: string, max = MAX_LINE): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * For a person: each tool call with its (redacted, shortened) arguments and
 * whether it worked (the result itself is shown once, in the answer; `--json`
 * carries its start as `summary`), remote calls with the peer and the endpoint, the
 * answer once (streamed when the model streams). On a terminal a spinner with
 * the elapsed seconds shows while nothing else is being written.
 */
export function createHumanRenderer(
  io: CliIO,
  options: { spinner: boolean; now?: () => number; controls?: (sequence: string) => void },
): ChatRenderer {
  // The spinner's own sequences go out unescaped; `io` escapes everything it is given.
  const control = options.controls ?? io.out;
  const now = options.now ?? Date.now;
  let midLine = false;
  let streamedBy: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let started = 0;
  let frame = 0;
  let spinnerShown = false;
  let lastRemote: string | undefined;

  const clearSpinner = () => {
    if (spinnerShown) control('\r\x1b[K');
    spinnerShown = false;
  };
  const drawSpinner = () => {
    if (midLine) return;
    const seconds = ((now() - started) / 1000).toFixed(1);
    control(`\r\x1b[K${SPINNER_FRAMES[frame++ % SPINNER_FRAMES.length]} working… ${seconds}s`);
    spinnerShown = true;
  };
  const stopSpinner = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
    clearSpinner();
  };
  const line = (text: string) => {
    clearSpinner();
    if (midLine) io.out('\n');
    midLine = false;
    // Text streamed before a tool call was a step, not the answer: a later answer is printed.
    streamedBy = undefined;
    io.out(text + '\n');
  };

  return {
    busy() {
      streamedBy = undefined;
      if (!options.spinner) return;
      started = now();
      frame = 0;
      drawSpinner();
      timer = setInterval(drawSpinner, SPINNER_MS);
      timer.unref();
    },
    event(event) {
      switch (event.type) {
        case 'transfer':
          line(`  → ${event.from} hands over to ${event.to}`);
          break;
        case 'note':
          line(`  ↩ ${event.agent}: ${oneLine(event.text)}`);
          break;
        case 'tool_call':
          line(`  ⚙ ${event.agent}: ${event.tool}${event.args ? ` ${event.args}` : ''}`);
          break;
        case 'tool_result':
          // The result itself reaches the person in the answer; here only whether it worked (and why not).
          line(event.ok ? `    ✓ ${event.tool} done` : `    ✗ ${event.tool} failed: ${oneLine(event.summary)}`);
          break;
        case 'remote_call': {
          const where = event.endpoint ? ` at ${event.endpoint}` : '';
          const text = `  ⇄ ${event.peer}${where}: ${event.status}${event.detail ? ` (${oneLine(event.detail)})` : ''}`;
          // The peer's own closing state and the call's outcome often say the same: once is enough.
          if (text !== lastRemote) line(text);
          lastRemote = text;
          break;
        }
        case 'text':
          clearSpinner();
          if (streamedBy === undefined) {
            if (midLine) io.out('\n');
            io.out(`${event.agent}: `);
            streamedBy = event.agent;
          }
          io.out(event.delta);
          midLine = !event.delta.endsWith('\n');
          break;
        case 'answer':
          // Streamed just before: the answer is on screen once.
          if (streamedBy !== event.agent) line(`${event.agent}: ${event.text}`);
          break;
        case 'question':
          line(`? ${event.agent} asks: ${event.text}`);
          break;
        case 'failed':
          line(`✗ failed: ${event.text}`);
          break;
        case 'cancelled':
          line('✗ cancelled — the conversation goes on');
          break;
        default:
          assertNever(event);
      }
    },
    end() {
      stopSpinner();
      if (midLine) io.out('\n');
      midLine = false;
    },
  };
}
