/** What a load client expects back. */
export type ResponseKind = 'send' | 'card';

/**
 * True when one response is a success judged by its body, not its status:
 * JSON-RPC errors come back as HTTP 200. `send`: a completed task or an agent
 * message; `card`: an agent card with a name.
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
  const result = doc.result as { task?: { status?: { state?: string } }; message?: unknown } | undefined;
  if (!result) return false;
  if (result.message) return true;
  return result.task?.status?.state === 'TASK_STATE_COMPLETED';
}
