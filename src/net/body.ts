import { PassThrough, pipeline, type Readable } from 'node:stream';
import {
  brotliDecompressSync,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  gunzipSync,
  inflateSync,
} from 'node:zlib';
import { LangoError } from '../errors';

/**
 * Reading what a remote server sends, within a byte cap and without ever
 * leaving an `'error'` event unheard: an undici response body emits one
 * when destroyed before its end (a redirect or error status we do not
 * read, a cap reached), and with no listener that event ends the process.
 */

/** A body larger than the cap it was read under. */
export class BodyTooLargeError extends LangoError {
  constructor(
    readonly limit: number,
    what = 'body',
  ) {
    super(`${what} larger than ${limit} bytes`);
  }
}

/** Gives a node-stream body a permanent error listener, so destroying it early can never crash the process. */
export function quietBody(body: Readable): Readable {
  if (!body.listenerCount('error')) body.on('error', () => undefined);
  return body;
}

/** Discards a body we will not read (a redirect, an error page) without letting it throw. */
export function discardBody(body: Readable): void {
  quietBody(body).destroy();
}

/**
 * Reads a node-stream body (undici `request`) to the end, at most `maxBytes`,
 * decoding `gzip`, `deflate` and `br` when the server sent them anyway; the
 * decoded size is capped too, so a compression bomb stops at the cap.
 * @example
 * const bytes = await readBody(response.body, 262144, response.headers['content-encoding']);
 */
export async function readBody(body: Readable, maxBytes: number, contentEncoding?: string | string[]): Promise<Buffer> {
  quietBody(body);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) throw new BodyTooLargeError(maxBytes);
      chunks.push(chunk as Buffer);
    }
  } finally {
    if (!body.readableEnded) body.destroy();
  }
  return decode(Buffer.concat(chunks), maxBytes, contentEncoding);
}

function decode(raw: Buffer, maxBytes: number, contentEncoding?: string | string[]): Buffer {
  const encoding = String(contentEncoding ?? '')
    .toLowerCase()
    .trim();
  if (encoding === '' || encoding === 'identity') return raw;
  const options = { maxOutputLength: maxBytes };
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(raw, options);
    if (encoding === 'deflate') return inflateSync(raw, options);
    if (encoding === 'br') return brotliDecompressSync(raw, options);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new BodyTooLargeError(maxBytes, 'decoded body');
    throw new LangoError(`body is not valid ${encoding}`, { cause: error });
  }
  throw new LangoError(`unsupported content-encoding ${encoding.slice(0, 40)}`);
}

/**
 * A streamed body decoded, when a server compressed it although we did not
 * offer to accept that (`gzip`, `deflate`, `br`); an unsupported encoding
 * gives a body that errors at the first read.
 */
export function decodedBody(body: Readable, contentEncoding: string | string[] | undefined): Readable {
  const encoding = String(contentEncoding ?? '')
    .toLowerCase()
    .trim();
  if (encoding === '' || encoding === 'identity') return body;
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) {
    discardBody(body);
    const unsupported = new PassThrough();
    unsupported.destroy(new LangoError(`unsupported content-encoding ${encoding.slice(0, 40)}`));
    return unsupported;
  }
  return pipeline(quietBody(body), decoder, () => undefined);
}

/** What {@link relayedWebStream} does with a body's bytes; a throw from either errors the stream. */
export interface BodyRelay {
  /** One chunk as it arrives: it enqueues what the reader gets of it (nothing, all, or pieces). */
  chunk(chunk: Buffer): void;
  /** The body ended: it enqueues what was held back. */
  end?(): void;
}

/**
 * A pull-based web byte stream over a Node body, each chunk passed through
 * the relay `relayTo` makes for the stream's `enqueue`: the body paused
 * while the reader is behind (the queue at the strategy's high-water mark)
 * and resumed when it pulls; destroyed on cancel and when the relay throws,
 * which errors the stream.
 */
export function relayedWebStream(
  body: Readable,
  relayTo: (enqueue: (bytes: Uint8Array) => void) => BodyRelay,
  strategy?: QueuingStrategy<Uint8Array>,
): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const relay = relayTo((bytes) => controller.enqueue(bytes));
        const fail = (error: unknown) => {
          if (done) return;
          done = true;
          controller.error(error);
          body.destroy();
        };
        body.on('data', (chunk: Buffer) => {
          if (done) return;
          try {
            relay.chunk(chunk);
          } catch (error) {
            return fail(error);
          }
          if ((controller.desiredSize ?? 1) <= 0) body.pause();
        });
        body.on('end', () => {
          if (done) return;
          try {
            relay.end?.();
          } catch (error) {
            return fail(error);
          }
          done = true;
          controller.close();
        });
        body.on('error', fail);
      },
      pull() {
        body.resume();
      },
      cancel() {
        done = true;
        body.destroy();
      },
    },
    strategy,
  );
}
