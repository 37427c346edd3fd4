import { InputError } from '../errors';

/**
 * `--url` as the node's A2A base URL, without a trailing slash.
 * @throws InputError (exit 2) naming the value and the fix: an http(s) URL,
 * with the likely one when only the scheme is missing (`127.0.0.1:4000`).
 * @example
 * nodeUrl('http://127.0.0.1:4000/'); // 'http://127.0.0.1:4000'
 * nodeUrl('127.0.0.1:4000'); // throws: … did you mean http://127.0.0.1:4000?
 */
export function nodeUrl(raw: string): string {
  const text = raw.trim();
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname) {
    if (url.username || url.password)
      throw new InputError(`--url must not carry a user or password (give a credential with --token or LANGO_TOKEN)`);
    return url.href.replace(/\/+$/, '');
  }
  // `host:port` parses as a URL with the host for its scheme: either way the scheme is what is missing.
  const guess = /^[A-Za-z][\w+.-]*:\/\//.test(text) ? undefined : `http://${text}`;
  let likely = false;
  if (guess) {
    try {
      likely = Boolean(new URL(guess).hostname);
    } catch {
      likely = false;
    }
  }
  throw new InputError(
    `--url must be the node's http:// or https:// base URL, such as http://127.0.0.1:4000 (got "${raw}")` +
      (likely ? `; did you mean --url ${guess}?` : ''),
  );
}
