import http from 'node:http';
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
 * GETs `pathname` under the node's base URL with `headers` (a credential
 * for its owner-only routes). Over `node:http` rather than `fetch`: the
 * platform's fetch loads its whole HTTP client on first use, a good part of
 * a short command's time. No redirect is followed (a credential stays with
 * the node it was meant for), and no connection is kept.
 * @throws LangoError naming the URL when it does not answer in time or answers too much.
 */
export async function fetchNodeAnswer(
  baseUrl: string,
  pathname: string,
  headers: Record<string, string> = {},
): Promise<NodeAnswer> {
  const url = new URL(pathname, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  let answer: { status: number; text: string };
  try {
    answer = await get(url, headers);
  } catch (err) {
    if (err instanceof LangoError) throw err;
    throw new LangoError(`the node at ${baseUrl} did not answer ${pathname}: ${errorMessage(err)}`, { cause: err });
  }
  try {
    return { status: answer.status, body: JSON.parse(answer.text) as unknown, json: true };
  } catch {
    return { status: answer.status, body: undefined, json: false };
  }
}

/** One bounded GET: its status and text, within {@link REQUEST_TIMEOUT_MS} and {@link MAX_ANSWER_BYTES}. */
async function get(url: URL, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const client = url.protocol === 'https:' ? await import('node:https') : http;
  const what = `${url.origin} ${url.pathname}`;
  return new Promise((resolve, reject) => {
    const request = client.get(
      url,
      { headers: { accept: 'application/json', ...headers }, agent: false },
      (response) => {
        if (Number(response.headers['content-length']) > MAX_ANSWER_BYTES) return request.destroy(tooLarge(what));
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) request.destroy(tooLarge(what));
          else chunks.push(chunk);
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    const timer = setTimeout(
      () => request.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS / 1000} s`)),
      REQUEST_TIMEOUT_MS,
    );
    request.on('error', reject);
    request.on('close', () => clearTimeout(timer));
  });
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

function tooLarge(what: string): LangoError {
  return new LangoError(`${what}: the answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MB; not read`);
}
