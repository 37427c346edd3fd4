import http from 'node:http';
import { duplexPair } from 'node:stream';

/** An answer read in full. */
export interface InProcessResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json(): any;
}

/** What to send: method, headers and body (a string) of one request. */
export interface InProcessRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The body in pieces, sent chunked (no `Content-Length`), one piece per turn of the event loop. */
  chunks?: string[];
}

/**
 * The in-process tier for HTTP surfaces: real HTTP/1.1 requests to a request
 * listener (an express app) over an in-memory socket pair, parsed by Node's
 * own HTTP server and client, with no port bound. For tests of status
 * codes, headers and bodies, where a listening socket adds nothing.
 * @example
 * const call = inProcess(a2a.app);
 * const answer = await call('/tasks/nope', { headers: { 'A2A-Version': '1.0' } });
 */
export function inProcess(
  listener: http.RequestListener,
): (path: string, request?: InProcessRequest) => Promise<InProcessResponse> {
  const server = http.createServer(listener);
  return (path, request = {}) =>
    new Promise((resolve, reject) => {
      const [client, serverSide] = duplexPair();
      // A client on this machine, as a loopback socket would say (the identity component reads it).
      Object.defineProperty(serverSide, 'remoteAddress', { value: '127.0.0.1' });
      server.emit('connection', serverSide);
      const outgoing = http.request(
        {
          createConnection: () => client as unknown as import('node:net').Socket,
          path,
          method: request.method ?? 'GET',
          headers: { host: '127.0.0.1', connection: 'close', ...request.headers },
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (chunk: Buffer) => parts.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            client.destroy();
            serverSide.destroy();
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
          });
        },
      );
      outgoing.on('error', reject);
      const pieces = request.chunks;
      if (!pieces) {
        outgoing.end(request.body);
        return;
      }
      const write = (index: number): void => {
        if (index === pieces.length) outgoing.end();
        else if (outgoing.write(pieces[index]!)) setImmediate(() => write(index + 1));
        else outgoing.once('drain', () => write(index + 1));
      };
      write(0);
    });
}
