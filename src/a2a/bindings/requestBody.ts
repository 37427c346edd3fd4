import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import type { HttpCall } from './httpCall';
import { INVALID_REQUEST, InboundRefusal, type Step } from './inbound';

/**
 * The body steps of the inbound chain: the body limit, on the declared
 * length before anything else and on the bytes as they arrive (chunked and
 * compressed bodies too), and the one JSON reader every HTTP binding uses
 * (media type, charset, content encoding, parse). A body over the limit is
 * refused with 413 at once; what the caller still sends is then read and
 * dropped for a bounded time before the connection closes
 * ({@link lingeringClose}, as nginx's lingering close): closing a connection
 * with unread bytes resets it, and a caller still writing would see a
 * broken pipe, not the answer.
 */

/**
 * How long a refused body is read and dropped after its answer: at most this long in all, until it pauses
 * this long, or until this much more arrived (a caller still writing has long seen the answer by then).
 */
const LINGER_MS = 5_000;
const LINGER_IDLE_MS = 1_000;
const LINGER_BYTES = 64 * 1024 * 1024;
const PARSE_ERROR = -32700;

/** The media type of a JSON-RPC body (the SDK's transport takes no other). */
export const JSON_RPC_MEDIA_TYPES: ReadonlySet<string> = new Set(['application/json']);
/** The media types of an HTTP+JSON body: JSON, and A2A's own (§11.1). */
export const REST_MEDIA_TYPES: ReadonlySet<string> = new Set(['application/json', 'application/a2a+json']);

function tooLarge(message: string): InboundRefusal {
  return new InboundRefusal(413, INVALID_REQUEST, message, { close: true });
}

/**
 * Refuses a request whose declared `Content-Length` is over `maxBodyBytes` (413, the connection closed after the
 * answer), before the credential check.
 */
export function declaredBodyLimit(maxBodyBytes: number): Step<HttpCall> {
  return (call, next) => {
    const declared = Number(call.req.headers['content-length'] ?? 0);
    if (!(declared > maxBodyBytes)) return next();
    throw tooLarge(`request body of ${declared} bytes exceeds the limit of ${maxBodyBytes} bytes`);
  };
}

/**
 * Reads the body of a request that has one as JSON into `call.body` (an empty body reads as `{}`, as
 * body-parser's); a request without one goes on with `call.body` undefined. Refuses a body of another media
 * type, charset or content encoding (the SDK's ContentTypeNotSupported), one over `maxBodyBytes` once decoded
 * (413), one that does not decompress (400) and one that is not JSON (JSON-RPC's parse error; HTTP 400).
 */
export function jsonBody(options: { maxBodyBytes: number; mediaTypes: ReadonlySet<string> }): Step<HttpCall> {
  const { maxBodyBytes, mediaTypes } = options;
  return (call, next) => {
    const { req } = call;
    if (!hasBody(req)) return next();
    // The body's events come in the socket's async context: the rest of the chain runs in a continuation
    // registered here, in the request's (its trace span must reach the turn).
    const read = new Promise<void>((resolve, reject) => {
      const decoder = decoderFor(req.headers['content-type'], mediaTypes);
      collect(req, maxBodyBytes, (outcome) => {
        try {
          call.body = parseJson(decoded(outcome, decoder, req, maxBodyBytes));
          resolve();
        } catch (err) {
          reject(err);
        }
      });
    });
    return read.then(() => next());
  };
}

/** Whether a request carries a body (a length, even 0, or chunks), as body-parser judges it. */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;
}

/** The decoder of a body of `contentType` (undefined: UTF-8), or ContentTypeNotSupported. */
function decoderFor(
  contentType: string | undefined,
  mediaTypes: ReadonlySet<string>,
): { decode(input: Uint8Array): string } | undefined {
  // The spelling nearly every client sends needs no parsing.
  if (contentType === 'application/json') return undefined;
  const [mediaType = '', ...parameters] = (contentType ?? '').split(';');
  if (!mediaTypes.has(mediaType.trim().toLowerCase())) {
    const expected = [...mediaTypes].join(' or ');
    throw new ContentTypeNotSupportedError(
      contentType === undefined
        ? `a request body needs a Content-Type; expected ${expected}.`
        : `Unsupported Content-Type "${contentType}"; expected ${expected}.`,
    );
  }
  const charset = charsetOf(parameters);
  return charset === 'utf-8' ? undefined : textDecoder(charset);
}

/** The body's text, or the refusal its reading ended in. */
function decoded(
  outcome: Collected,
  decoder: { decode(input: Uint8Array): string } | undefined,
  req: IncomingMessage,
  limit: number,
): string {
  if (outcome instanceof Buffer) return decoder ? decoder.decode(outcome) : stripBom(outcome.toString('utf8'));
  if (outcome instanceof Error) throw outcome;
  if (outcome === 'aborted') throw new InboundRefusal(400, INVALID_REQUEST, 'request aborted');
  if (outcome === 'too large') throw tooLarge(`request body exceeds the limit of ${limit} bytes`);
  throw new InboundRefusal(400, INVALID_REQUEST, `the request body does not decompress as ${encodingOf(req)}`, {
    close: true,
  });
}

const encodingOf = (req: IncomingMessage) => String(req.headers['content-encoding']).toLowerCase();

function parseJson(text: string): unknown {
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new InboundRefusal(400, PARSE_ERROR, 'Parse error: the request body is not valid JSON', { rpcStatus: 200 });
  }
}

/** The `charset` parameter, lower-cased, `utf-8` when absent. */
function charsetOf(parameters: string[]): string {
  for (const parameter of parameters) {
    const [key, value] = parameter.split('=');
    if (key?.trim().toLowerCase() === 'charset' && value !== undefined)
      return value.trim().replace(/^"|"$/g, '').toLowerCase();
  }
  return 'utf-8';
}

/** A decoder for a JSON body's charset: UTF-8, -16 or -32 (RFC 7159 §8.1), as body-parser takes them. */
function textDecoder(charset: string): { decode(input: Uint8Array): string } {
  if (charset.startsWith('utf-')) {
    try {
      return new TextDecoder(charset);
    } catch {
      // Falls through to the refusal: a `utf-` name Node does not know.
    }
  }
  throw new ContentTypeNotSupportedError(`unsupported charset "${charset.toUpperCase()}"; send JSON in UTF-8.`);
}

const stripBom = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/** A stream inflating `encoding`, undefined for the identity. */
function decompressor(encoding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  switch (encoding) {
    case 'identity':
      return undefined;
    case 'gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      throw new ContentTypeNotSupportedError(
        `unsupported Content-Encoding "${encoding}"; send gzip, deflate, br or none.`,
      );
  }
}

type Collected = Buffer | 'too large' | 'aborted' | 'undecodable' | Error;

/**
 * Reads the body to its end, decompressed, or until it passes `limit` or fails, and calls `done` once with the
 * bytes or why not (an unsupported encoding as its ContentTypeNotSupported).
 */
function collect(req: IncomingMessage, limit: number, done: (outcome: Collected) => void): void {
  const header = req.headers['content-encoding'];
  let inflate: ReturnType<typeof decompressor>;
  try {
    inflate = header === undefined ? undefined : decompressor(encodingOf(req));
  } catch (err) {
    done(err as Error);
    return;
  }
  const source: Readable = inflate ? req.pipe(inflate) : req;
  const chunks: Buffer[] = [];
  let length = 0;
  const finish = (outcome: Collected) => {
    source.off('data', onData);
    source.off('end', onEnd);
    source.off('error', onError);
    req.off('aborted', onAborted);
    if (inflate) {
      req.off('error', onAborted);
      req.unpipe(inflate);
      inflate.destroy();
    }
    done(outcome);
  };
  const onData = (chunk: Buffer) => {
    length += chunk.length;
    if (length > limit) finish('too large');
    else chunks.push(chunk);
  };
  const onEnd = () => finish(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length));
  const onError = () => finish(inflate ? 'undecodable' : 'aborted');
  const onAborted = () => finish('aborted');
  source.on('data', onData);
  source.on('end', onEnd);
  source.on('error', onError);
  req.on('aborted', onAborted);
  if (inflate) req.on('error', onAborted);
}

/**
 * Reads and drops the rest of the body of a request refused before its body was read, once its answer is
 * written (a lingering close, as nginx's): until the body ends — the connection is then in step again and stays
 * open, as an answer without `Connection: close` promised — or it pauses for {@link LINGER_IDLE_MS},
 * {@link LINGER_BYTES} more arrived or {@link LINGER_MS} passed: the connection is then destroyed, and what the
 * caller sends after that is not read. A caller still writing when the answer came thus reads it, instead of a
 * reset. The answer must not say `Connection: close`: Node ends such an answer's socket as soon as it is
 * written, over the bytes not yet read, which resets it.
 */
export function lingeringClose(req: IncomingMessage): void {
  const socket = req.socket;
  let left = LINGER_BYTES;
  const finish = () => {
    clearTimeout(total);
    clearTimeout(idle);
    req.off('data', onData);
    req.off('end', finish);
    req.off('error', finish);
    socket.off('close', finish);
  };
  const close = () => {
    finish();
    socket.destroy();
  };
  const idle = setTimeout(close, LINGER_IDLE_MS);
  const onData = (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) return close();
    idle.refresh();
  };
  const total = setTimeout(close, LINGER_MS);
  req.on('data', onData);
  req.on('end', finish);
  req.on('error', finish);
  socket.on('close', finish);
  req.resume();
}
