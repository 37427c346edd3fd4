import { createHash } from 'node:crypto';

/**
 * Which conversation lines a peer still needs (issue 12, "follow-ups send
 * only what is new"). A new remote context gets the whole transcript; a
 * continued one only the lines after the last one the peer has seen —
 * never its own answers, never the previous request again.
 */

/** The per-session state kept for one peer: remote ids and digests of the lines it has seen. */
export interface PeerSessionState {
  taskId?: string;
  contextId?: string;
  /** Short digests of the conversation lines the peer has seen (sent as context, or our requests). */
  seen?: string[];
}

/** Digests kept per peer and session: the runner sends at most a dozen context lines per call. */
const MAX_SEEN = 64;
/** How the runner caps one line of context (runner.ts `REMOTE_CONTEXT.charsEach`): a request is seen in either form. */
const LINE_CAP = 600;

function digest(line: string): string {
  return createHash('sha256').update(line).digest('base64url').slice(0, 16);
}

/**
 * The context lines to send with this call: all of them for a new remote
 * context, else those after the last line the peer has seen, without the
 * peer's own answers (lines `<peer>: …`).
 * @example
 * unseenContext(['user: hi', 'weather: sunny', 'user: and tomorrow?'], state, 'weather');
 */
export function unseenContext(context: string[], state: PeerSessionState, peerName: string): string[] {
  if (!state.contextId) return context;
  const seen = new Set(state.seen ?? []);
  let lastSeen = -1;
  context.forEach((line, i) => {
    if (seen.has(digest(line))) lastSeen = i;
  });
  return context.slice(lastSeen + 1).filter((line) => !line.startsWith(`${peerName}: `));
}

/** After a call the peer answered: it has now seen every line of `context` and the request itself. */
export function rememberSeen(state: PeerSessionState, context: string[], request: string): void {
  const capped = request.length > LINE_CAP ? `${request.slice(0, LINE_CAP)}…` : request;
  const added = [...context, `user: ${request}`, `user: ${capped}`].map(digest);
  state.seen = [...new Set([...(state.seen ?? []), ...added])].slice(-MAX_SEEN);
}
