import { errorMessage, LangoError } from '../errors';

/**
 * Plain HTTP requests from the CLI to a node (its card, catalog, reports,
 * health): light, so `lango agents --url` loads nothing of the A2A client.
 * Any node may be hostile: every answer is bounded in time and size.
 */

/** How long the CLI waits for a node's answer to a plain HTTP request (card, catalog, health). */
const REQUEST_TIMEOUT_MS = 10_000;
/** The most the CLI reads of one answer: a report of a large node is well under it. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** An answer read as JSON; `body` is undefined when it was not JSON (`text` says what came). */
export interface NodeAnswer {
  status: number;
  body: unknown;
  json: boolean;
}

/**
 * Fetches `pathname` under the node's base URL with `headers` (a credential
 * for its owner-only routes).
 * @throws LangoError naming the URL when it does not answer in time or answers too much.
 */
export async function fetchNodeAnswer(
  baseUrl: string,
  pathname: string,
  headers: Record<string, string> = {},
): Promise<NodeAnswer> {
  const url = new URL(pathname, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), REQUEST_TIMEOUT_MS);
  try {
    const response = await fetch(url, { headers, signal: deadline.signal, redirect: 'manual' });
    const text = await boundedText(response, `${baseUrl} ${pathname}`);
    try {
      return { status: response.status, body: JSON.parse(text) as unknown, json: true };
    } catch {
      return { status: response.status, body: undefined, json: false };
    }
  } catch (err) {
    if (err instanceof LangoError) throw err;
    const why = deadline.signal.aborted ? `no answer in ${REQUEST_TIMEOUT_MS / 1000} s` : fetchFailure(err);
    throw new LangoError(`the node at ${baseUrl} did not answer ${pathname}: ${why}`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Fetches JSON from the node.
 * @throws LangoError naming the URL when it does not answer, or answers something that is not JSON.
 */
export async function fetchNodeJson(
  baseUrl: string,
  pathname: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const answer = await fetchNodeAnswer(baseUrl, pathname, headers);
  if (!answer.json)
    throw new LangoError(`the node at ${baseUrl} answered ${pathname} with HTTP ${answer.status}, not JSON`);
  return answer;
}

/**
 * A report from one of the node's owner-only routes (`/node/tools`, …), or
 * why the node would not give it (not the owner, or a node without them).
 */
export async function fetchNodeReport<T>(
  baseUrl: string,
  pathname: string,
  headers: Record<string, string>,
): Promise<{ ok: true; report: T } | { ok: false; why: string }> {
  const { status, body, json } = await fetchNodeAnswer(baseUrl, pathname, headers);
  if (status === 200 && json) return { ok: true, report: body as T };
  const message = (body as { error?: { message?: unknown } } | null | undefined)?.error?.message;
  return {
    ok: false,
    why: `HTTP ${status}${typeof message === 'string' ? `: ${message.slice(0, 200)}` : json ? '' : ', not JSON'}`,
  };
}

/** Why a fetch failed: undici says only "fetch failed" and puts the reason (ECONNREFUSED, …) in its cause. */
export function fetchFailure(err: unknown): string {
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  return cause ? errorMessage(cause) : errorMessage(err);
}

/** The answer's text, refusing one longer than {@link MAX_ANSWER_BYTES}. */
async function boundedText(response: Response, what: string): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    throw tooLarge(what);
  }
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_ANSWER_BYTES) throw tooLarge(what);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function tooLarge(what: string): LangoError {
  return new LangoError(`${what}: the answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MB; not read`);
}
