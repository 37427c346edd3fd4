/**
 * What a turn reports while it runs: streamed to the CLI and to A2A
 * subscribers as status updates. A discriminated union; switch on `type` and
 * end with {@link assertNever}.
 */
export type RunEvent =
  | { type: 'agent_start'; agent: string }
  | { type: 'text_delta'; agent: string; delta: string }
  | { type: 'transfer'; from: string; to: string }
  | { type: 'transfer_refused'; from: string; to: string; reason: string }
  | { type: 'rejected'; agent: string; note: string }
  /** `args`: the call's arguments as a person may see them (masked, redacted, cut; see `previewArguments`). */
  | { type: 'tool_start'; agent: string; tool: string; callId: string; args?: string }
  | { type: 'tool_end'; agent: string; tool: string; callId: string; ok: boolean; summary: string }
  /** `endpoint`: the peer's A2A interface URL the request goes to (not its card's URL). */
  | { type: 'remote_call'; agent: string; status: string; detail?: string; endpoint?: string }
  | { type: 'input_required'; agent: string; question: string }
  | { type: 'final'; agent: string; text: string };

/** A piece of the model's text as it streams. */
export type TextDeltaEvent = Extract<RunEvent, { type: 'text_delta' }>;

/** Factories for {@link RunEvent}s, so call sites read as sentences. */
export const RunEvents = {
  agentStart: (agent: string): RunEvent => ({ type: 'agent_start', agent }),
  textDelta: (agent: string, delta: string): TextDeltaEvent => ({ type: 'text_delta', agent, delta }),
  transfer: (from: string, to: string): RunEvent => ({ type: 'transfer', from, to }),
  transferRefused: (from: string, to: string, reason: string): RunEvent => ({
    type: 'transfer_refused',
    from,
    to,
    reason,
  }),
  rejected: (agent: string, note: string): RunEvent => ({ type: 'rejected', agent, note }),
  toolStart: (agent: string, tool: string, callId: string, args?: string): RunEvent => ({
    type: 'tool_start',
    agent,
    tool,
    callId,
    ...(args !== undefined ? { args } : {}),
  }),
  toolEnd: (agent: string, tool: string, callId: string, ok: boolean, summary: string): RunEvent => ({
    type: 'tool_end',
    agent,
    tool,
    callId,
    ok,
    summary,
  }),
  remoteCall: (agent: string, status: string, detail?: string, endpoint?: string): RunEvent => ({
    type: 'remote_call',
    agent,
    status,
    detail,
    ...(endpoint !== undefined ? { endpoint } : {}),
  }),
  inputRequired: (agent: string, question: string): RunEvent => ({ type: 'input_required', agent, question }),
  final: (agent: string, text: string): RunEvent => ({ type: 'final', agent, text }),
};

/** Exhaustiveness check for switches over unions. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
