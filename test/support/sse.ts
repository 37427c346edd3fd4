import http from 'node:http';

/** One server-sent event as it came over the wire: its `id:` line (if any) and its parsed `data:`. */
export interface SseFrame {
  id: string | undefined;
  event: string | undefined;
  data: any;
}

/** An SSE response read frame by frame from a real socket, which the test can cut at any point. */
export interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The next frame; `undefined` once the server ended the stream (or the socket was cut). */
  next(): Promise<SseFrame | undefined>;
  /** Destroys the socket, as a dropped connection would: the server sees it close mid-stream. */
  cut(): void;
}

/**
 * POSTs `body` (JSON) to `url` and reads the answer as server-sent events.
 * A non-SSE answer (a JSON-RPC error, an HTTP error) comes back as one frame
 * with the parsed body.
 * @example
 * const sse = await openSse(`${url}/`, rpc('SendStreamingMessage', params), { 'A2A-Extensions': GENERATION_EXTENSION });
 * const first = await sse.next();
 */
export function openSse(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  method: 'POST' | 'GET' = 'POST',
): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      {
        method,
        headers: {
          'A2A-Version': '1.0',
          Accept: 'text/event-stream',
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}),
          ...headers,
        },
      },
      (res) => {
        const frames: SseFrame[] = [];
        const waiting: Array<(frame: SseFrame | undefined) => void> = [];
        let ended = false;
        let buffer = '';
        const push = (frame: SseFrame) => {
          const read = waiting.shift();
          if (read) read(frame);
          else frames.push(frame);
        };
        const end = () => {
          ended = true;
          for (const read of waiting.splice(0)) read(undefined);
        };
        const isSse = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          if (!isSse) return;
          for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            const lines = block.split('\n');
            const field = (name: string) =>
              lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).trimStart());
            const data = field('data').join('\n');
            if (data) push({ id: field('id')[0], event: field('event')[0], data: JSON.parse(data) });
          }
        });
        res.on('end', () => {
          if (!isSse && buffer) push({ id: undefined, event: undefined, data: JSON.parse(buffer) });
          end();
        });
        res.on('close', end);
        res.on('error', end);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          next: () =>
            frames.length > 0
              ? Promise.resolve(frames.shift())
              : ended
                ? Promise.resolve(undefined)
                : new Promise((r) => waiting.push(r)),
          cut: () => {
            req.destroy();
            res.destroy();
          },
        });
      },
    );
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
    req.end(payload);
  });
}

/** A JSON-RPC request body. */
export function rpc(method: string, params: unknown, id: number | string = 1): unknown {
  return { jsonrpc: '2.0', id, method, params };
}

/** The stream response (`result`) of a JSON-RPC SSE frame. */
export function resultOf(frame: SseFrame): Record<string, any> {
  if (frame.data?.error) throw new Error(`stream error: ${JSON.stringify(frame.data.error)}`);
  return frame.data.result ?? frame.data;
}
