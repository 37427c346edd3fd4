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
 * refused with 413 only once the caller has finished sending it, or a bounded
 * amount of it has been read and dropped ({@link drain}, which the binding's
 * refusal writer runs before any answer that closes the connection): closing
 * a connection with unread bytes resets it, and the caller would see a broken
 * pipe, not the answer.
 */

/** How much more than the limit is read and dropped, and for how long, before the 413 goes out anyway. */
const DRAIN_BYTES = 1 << 20;
const DRAIN_MS = 2_000;
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
  return async (call, next) => {
    call.body = await readJson(call.req, options.maxBodyBytes, options.mediaTypes);
    return next();
  };
}

/** Whether a request carries a body (a length, even 0, or chunks), as body-parser judges it. */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;
}

async function readJson(req: IncomingMessage, limit: number, mediaTypes: ReadonlySet<string>): Promise<unknown> {
  if (!hasBody(req)) return undefined;
  const contentType = req.headers['content-type'];
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
  const decoder = charset === 'utf-8' ? undefined : textDecoder(charset);
  const raw = await readBytes(req, limit);
  const text = decoder ? decoder.decode(raw) : stripBom(raw.toString('utf8'));
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

/** The body's bytes, decompressed, refused once over `limit` (after the drain, see above). */
async function readBytes(req: IncomingMessage, limit: number): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const inflate = decompressor(encoding);
  const source: Readable = inflate ? req.pipe(inflate) : req;
  const outcome = await collect(source, req, limit);
  if (inflate) {
    req.unpipe(inflate);
    inflate.destroy();
  }
  if (outcome instanceof Buffer) return outcome;
  if (outcome === 'aborted') throw new InboundRefusal(400, INVALID_REQUEST, 'request aborted');
  if (outcome === 'too large') throw tooLarge(`request body exceeds the limit of ${limit} bytes`);
  throw new InboundRefusal(400, INVALID_REQUEST, `the request body does not decompress as ${encoding}`, {
    close: true,
  });
}

type Collected = Buffer | 'too large' | 'aborted' | 'undecodable';

/** Reads `source` (the request, or its decompressor) to its end, or until it passes `limit` or fails. */
function collect(source: Readable, req: IncomingMessage, limit: number): Promise<Collected> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const finish = (outcome: Collected) => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      req.off('aborted', onAborted);
      req.off('close', onClose);
      if (source !== req) req.off('error', onAborted);
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) finish('too large');
      else chunks.push(chunk);
    };
    const onEnd = () => finish(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length));
    const onError = () => finish(source === req ? 'aborted' : 'undecodable');
    const onAborted = () => finish('aborted');
    // The caller went away before its body was whole.
    const onClose = () => {
      if (!req.complete) finish('aborted');
    };
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onError);
    req.on('aborted', onAborted);
    req.on('close', onClose);
    if (source !== req) req.on('error', onAborted);
  });
}

/**
 * Reads and drops what is left of the request's body — until it ends, {@link DRAIN_BYTES} more arrived or
 * {@link DRAIN_MS} passed — so the answer that follows is read by the caller instead of reset with the connection.
 */
export function drain(req: IncomingMessage): Promise<void> {
  if (req.readableEnded || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let left = DRAIN_BYTES;
    const finish = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', finish);
      req.off('close', finish);
      req.off('error', finish);
      if (!req.readableEnded) req.pause();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      left -= chunk.length;
      if (left < 0) finish();
    };
    const timer = setTimeout(finish, DRAIN_MS);
    req.on('data', onData);
    req.on('end', finish);
    req.on('close', finish);
    req.on('error', finish);
    req.resume();
  });
}
