/**
 * What every part of the console's script shares: building elements from
 * text (never HTML from data), the console API's fetch helpers and the ways
 * times are shown.
 */

/** The element with `id` (the shell always has it). */
export const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** Builds an element with text and attributes (never HTML from data). */
export function el(tag: string, text?: string, attributes: Record<string, string> = {}): HTMLElement {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

/** A button that runs `onClick` (its errors shown in `where`, if given). */
export function button(text: string, onClick: () => unknown, attributes: Record<string, string> = {}): HTMLElement {
  const node = el('button', text, { type: 'button', ...attributes });
  node.addEventListener('click', () => void onClick());
  return node;
}

/** A refusal (an expired session) reloads into the sign-in or refusal page. */
function refused(res: Response): boolean {
  if (res.status !== 401 && res.status !== 403) return false;
  location.assign('/console');
  return true;
}

/** A GET under /console/api. */
export async function api(path: string): Promise<Response> {
  const res = await fetch(path, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  if (refused(res)) throw new Error(`refused: ${res.status}`);
  return res;
}

/** A GET under /console/api read as JSON; a failure throws with the node's message. */
export async function getJson<T>(path: string): Promise<T> {
  const res = await api(path);
  const body = (await res.json()) as T & { error?: { message?: string } };
  if (!res.ok) throw new Error(body.error?.message ?? `HTTP ${res.status}`);
  return body;
}

/** A POST of JSON under /console/api; resolves with the status and the JSON answer. */
export async function postJson<T>(path: string, body: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
  if (refused(res)) throw new Error(`refused: ${res.status}`);
  return { status: res.status, body: (await res.json()) as T };
}

/** A duration as a person reads it. */
export const took = (ms?: number) =>
  ms === undefined
    ? '…'
    : ms < 1000
      ? `${ms} ms`
      : ms < 60_000
        ? `${(ms / 1000).toFixed(1)} s`
        : `${Math.round(ms / 60_000)} min`;

/** How long ago `iso` was: `12 s ago`, `3 min ago`, or the time of day past an hour. */
export function ago(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const ms = now - Date.parse(iso);
  if (Number.isNaN(ms)) return '—';
  if (ms < 0) return `in ${took(-ms)}`;
  if (ms < 5000) return 'just now';
  if (ms < 60_000) return `${Math.round(ms / 1000)} s ago`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min ago`;
  return new Date(iso).toLocaleString();
}

/** Shows a failure in `where` as an alert line. */
export function showError(where: HTMLElement, err: unknown): void {
  where.replaceChildren(el('p', err instanceof Error ? err.message : String(err), { class: 'error', role: 'alert' }));
}
