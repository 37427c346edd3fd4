import net from 'node:net';

/** A TCP proxy on 127.0.0.1 that cuts chosen connections as a dropped network would. */
export interface CuttingProxy {
  url: string;
  port: number;
  /** Points the proxy at the server behind it (set once that server listens). */
  target(port: number): void;
  /**
   * Cuts the next connection whose answer is a server-sent event stream once
   * `afterEvents` events of it have passed (0: right after its headers):
   * both sockets are destroyed, as a dropped connection leaves them.
   */
  cutNextStream(afterEvents: number): void;
  /** How many connections it has cut. */
  readonly cuts: number;
  /** How many answers have started as an event stream (their headers passed), the cut ones too. */
  readonly streams: number;
  close(): Promise<void>;
}

/**
 * Starts the proxy on port 0.
 * @example
 * const proxy = await startCuttingProxy();
 * proxy.target(nodePort);
 * proxy.cutNextStream(3);
 */
export async function startCuttingProxy(): Promise<CuttingProxy> {
  let targetPort = 0;
  let pending: number | undefined;
  let cuts = 0;
  let streams = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    let cutDone = false;
    const cut = () => {
      if (cutDone) return;
      cutDone = true;
      cuts += 1;
      client.destroy();
      upstream.destroy();
    };
    /** Left to pass of the stream being cut on this connection (counted in events), once its headers are seen. */
    let left: number | undefined;
    let head = '';
    /** The headers of the answer starting on this connection, until they are complete (then undefined). */
    let answerHead: string | undefined;
    upstream.on('data', (chunk: Buffer) => {
      if (cutDone) return;
      let text = chunk.toString('latin1');
      // An answer starts with its status line (each a write of its own on a kept-alive connection).
      if (text.startsWith('HTTP/')) answerHead = '';
      if (answerHead !== undefined) {
        answerHead += text;
        const headersEnd = answerHead.indexOf('\r\n\r\n');
        if (headersEnd >= 0) {
          if (/\r\ncontent-type: text\/event-stream/i.test(answerHead.slice(0, headersEnd))) streams += 1;
          answerHead = undefined;
        }
      }
      if (left === undefined && pending !== undefined) {
        // A response starts with its status line; an SSE one gets cut, any other passes as it is.
        head = text.startsWith('HTTP/') ? text : head + text;
        const headersEnd = head.indexOf('\r\n\r\n');
        if (headersEnd < 0 || !/\r\ncontent-type: text\/event-stream/i.test(head.slice(0, headersEnd))) {
          client.write(chunk);
          return;
        }
        left = pending;
        pending = undefined;
        // This chunk: what of it comes after the headers is the stream's first bytes.
        const bodyStart = text.length - (head.length - headersEnd - 4);
        client.write(Buffer.from(text.slice(0, bodyStart), 'latin1'));
        text = text.slice(bodyStart);
        if (left === 0) return cut();
      }
      if (left === undefined) {
        client.write(chunk);
        return;
      }
      // Forward byte for byte up to the end of the last event allowed through, then cut.
      let at = 0;
      while (left > 0) {
        const end = text.indexOf('\n\n', at);
        if (end < 0) break;
        at = end + 2;
        left -= 1;
      }
      if (left > 0) {
        client.write(Buffer.from(text, 'latin1'));
        return;
      }
      client.write(Buffer.from(text.slice(0, at), 'latin1'), () => cut());
    });
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    target: (p) => (targetPort = p),
    cutNextStream: (afterEvents) => (pending = afterEvents),
    get cuts() {
      return cuts;
    },
    get streams() {
      return streams;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
