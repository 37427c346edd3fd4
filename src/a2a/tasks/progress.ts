import { assertNever, type RunEvent } from '../../agent/events';

/**
 * What a caller is told while a task works: one short sentence per
 * noteworthy {@link RunEvent}, or `undefined` for events that only matter to
 * the turn itself (text deltas, the final answer, the agent starting).
 * Tool names are shown here on purpose: the caller asked for this work and
 * watches it happen; the card, which strangers read, never lists them.
 */
export function describeProgress(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'transfer':
      return `${event.from} delegated to ${event.to}`;
    case 'transfer_refused':
      return `${event.from} could not delegate to ${event.to}: ${event.reason}`;
    case 'tool_start':
      return `${event.agent} started ${event.tool}${event.args ? ` ${event.args}` : ''}`;
    case 'tool_end':
      return `${event.agent} finished ${event.tool}${event.ok ? '' : ' (failed)'}`;
    case 'remote_call':
      return `remote agent ${event.agent}${event.endpoint ? ` at ${event.endpoint}` : ''}: ${event.status}${event.detail ? ` (${event.detail})` : ''}`;
    case 'rejected':
      return `${event.agent}: ${event.note}`;
    case 'agent_start':
    case 'text_delta':
    case 'input_required':
    case 'final':
      return undefined;
    default:
      return assertNever(event);
  }
}

/** Metadata attached to a progress update so programs need not parse the sentence. */
export function progressMetadata(event: RunEvent): Record<string, unknown> {
  switch (event.type) {
    case 'transfer':
    case 'transfer_refused':
      return { event: event.type, from: event.from, to: event.to };
    case 'tool_start':
      return withoutUndefined({
        event: event.type,
        agent: event.agent,
        tool: event.tool,
        callId: event.callId,
        args: event.args,
      });
    case 'tool_end':
      // The summary is the start of the result: a watching caller sees each result once, here.
      return {
        event: event.type,
        agent: event.agent,
        tool: event.tool,
        callId: event.callId,
        ok: event.ok,
        summary: event.summary,
      };
    case 'remote_call':
      return withoutUndefined({
        event: event.type,
        agent: event.agent,
        status: event.status,
        detail: event.detail,
        endpoint: event.endpoint,
      });
    default:
      return { event: event.type, agent: 'agent' in event ? event.agent : undefined };
  }
}

/** Metadata travels as a JSON object: keys without a value are left out rather than sent as `undefined`. */
function withoutUndefined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
