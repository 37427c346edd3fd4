/** What a load client expects back. */
export type ResponseKind = 'send' | 'card';

/**
 * True when one response is a success judged by its body, not its status:
 * JSON-RPC errors come back as HTTP 200. `send`: a completed task or an agent
 * message, in v1.0 form (`{task}` / `{message}`) or v0.3 form (`kind`);
 * `card`: an agent card with a name.
 */
export function judgeResponse(kind: ResponseKind, status: number, body: string): boolean {
  if (status !== 200) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false;
  }
  if (!parsed || typeof parsed !== 'object') return false;
  const doc = parsed as Record<string, unknown>;
  if (kind === 'card') return typeof doc.name === 'string' && doc.name.length > 0;
  if (doc.error !== undefined) return false;
  const result = doc.result as
    | { task?: { status?: { state?: string } }; message?: unknown; kind?: string; status?: { state?: string } }
    | undefined;
  if (!result) return false;
  if (result.kind === 'message') return true;
  if (result.kind === 'task') return result.status?.state === 'completed';
  if (result.message) return true;
  return result.task?.status?.state === 'TASK_STATE_COMPLETED';
}
