import type { LlmAgent } from './agent';
import { isApproval } from './approval';
import { previewArguments } from './argumentPreview';
import { RunEvents, type RunEvent } from './events';
import { executeToolCall } from './toolCall';
import { toolContext, type TurnState } from './turnState';
import type { PendingApproval } from '../store/sessions';

/**
 * Settles a tool call held for approval in the session's previous turn. The
 * model is shown (after the user's reply) its own call again followed by the
 * result: the call run with `ctx.approved = true` when the reply approves,
 * else "the user declined". The loop then continues as that agent.
 */
export async function* resumePendingApproval(
  turn: TurnState,
  agent: LlmAgent,
  pending: PendingApproval,
  options: { maxToolChars: number; redact: (text: string) => string },
): AsyncGenerator<RunEvent, void> {
  const { maxToolChars } = options;
  const { call } = pending;
  turn.push({ role: 'assistant', content: '', toolCalls: [call], author: agent.name });
  const respond = (content: string) => turn.push({ role: 'tool', toolCallId: call.id, name: call.name, content });
  if (!isApproval(turn.input.text)) {
    respond(`the user declined: ${call.name} was not run. Their reply follows the question above.`);
    yield RunEvents.toolEnd(agent.name, call.name, call.id, false, 'declined by the user');
    return;
  }
  const tool = agent.tools.find((t) => t.name === call.name);
  yield RunEvents.toolStart(agent.name, call.name, call.id, previewArguments(call.arguments, options.redact));
  if (!tool) {
    respond(`tool ${call.name} failed: the tool is no longer available`);
    yield RunEvents.toolEnd(agent.name, call.name, call.id, false, 'tool no longer available');
    return;
  }
  const outcome = await executeToolCall(tool, call.arguments, toolContext(turn, agent, call, true), maxToolChars);
  // A tool that asks again even when approved must not start an approval loop.
  const content =
    outcome.type === 'approval'
      ? `tool ${call.name} failed: it asked for approval again after the user approved`
      : outcome.content;
  const ok = outcome.type === 'result' && outcome.ok;
  respond(content);
  yield RunEvents.toolEnd(agent.name, call.name, call.id, ok, content.slice(0, 200));
}
