import type { ServerResponse } from 'node:http';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { sendJson } from './httpCall';

/** A stream's events and how each is written as one server-sent event (`data: …\n\n`). */
export interface EventStream<T = unknown> {
  events: AsyncGenerator<T>;
  frame(event: T): string;
  /**
   * Headers the stream knows once it has opened (its first event read): the
   * extensions a stream activates as it opens are answered this way.
   */
  openedHeaders?(): Record<string, string | string[]> | undefined;
}

/** How {@link writeEventStream} answers a failure, and where it says so. */
export interface EventStreamOptions {
  /** The JSON-RPC request's id, for an error answer. */
  id: string | number | null;
  /** The JSON-RPC error of a failure (the transport's own mapping); not read when the two below are given. */
  mapError?(err: unknown): { code: number; message: string };
  logger: Logger;
  /** Send the stream's headers before the first event, so that even a failure to start is an event. */
  headersFirst?: boolean;
  /** Answers a failure before the first event in the binding's shape (HTTP+JSON: its error body); JSON-RPC's else. */
  answerError?(err: unknown): void;
  /** The `event: error` frame of a failure after the stream opened, in the binding's shape; JSON-RPC's else. */
  errorFrame?(err: unknown): string;
}

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/**
 * Writes a JSON-RPC stream as the SDK's express handler does, frame for frame: the first event is awaited before
 * the SSE headers, so an error before any event is a plain JSON-RPC answer (unless `headersFirst`); a failure
 * after is an `event: error` frame. The next event is read only once the socket took the last one: a slow reader
 * holds the events in the live task's queue (the task's own length), not in the socket's buffer. A caller that
 * leaves ends the subscription at once, not at the task's next event.
 */
export async function writeEventStream<T>(
  res: ServerResponse,
  stream: EventStream<T>,
  options: EventStreamOptions,
): Promise<void> {
  const { events, frame } = stream;
  const { id, logger } = options;
  if (options.headersFirst) res.writeHead(200, SSE_HEADERS).flushHeaders();
  let event: IteratorResult<T>;
  try {
    event = await events.next();
  } catch (err) {
    if (res.headersSent) writeError(res, id, options, err);
    else if (options.answerError) options.answerError(err);
    else sendJson(res, 200, { jsonrpc: '2.0', id, error: jsonRpcError(options, err) });
    if (!res.writableEnded) res.end();
    return;
  }
  // The headers go out with the first frame, in one write (the SDK's handler flushes them alone first).
  if (!res.headersSent) res.writeHead(200, { ...SSE_HEADERS, ...stream.openedHeaders?.() });
  let left = false;
  const onClose = () => {
    left = true;
    // A throw in the stream's cleanup is logged: a caller leaving must not end the process.
    events.return(undefined as T).catch((err: unknown) => {
      logger.warn('JSON-RPC stream cleanup failed', { error: errorMessage(err) });
    });
  };
  res.once('close', onClose);
  try {
    while (!event.done && !left) {
      if (!res.write(frame(event.value))) await drained(res);
      if (left) break;
      event = await events.next();
    }
  } catch (err) {
    logger.warn('JSON-RPC stream failed', { error: errorMessage(err) });
    if (!res.writableEnded) writeError(res, id, options, err);
  } finally {
    res.off('close', onClose);
    if (!res.writableEnded) res.end();
  }
}

function writeError(res: ServerResponse, id: unknown, options: EventStreamOptions, err: unknown): void {
  if (options.errorFrame) res.write(options.errorFrame(err));
  else
    res.write(`event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, error: jsonRpcError(options, err) })}\n\n`);
}

function jsonRpcError(options: EventStreamOptions, err: unknown): { code: number; message: string } {
  return options.mapError?.(err) ?? { code: -32603, message: 'internal error' };
}

/** Resolves once the response's buffer has drained, or it closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
