import net from 'node:net';

/** What a raw probe heard: the status line's code and the body (empty for HEAD). */
export interface ProbeAnswer {
  status: number;
  body: string;
}

/**
 * One request written by hand on a fresh connection, as balancers and
 * orchestrators send health checks: HTTP/1.0 with no headers at all
 * (haproxy's `option httpchk GET <uri>`), or with only `Host` (a Kubernetes
 * probe names the pod's address). Node's own client always adds a Host.
 * @example
 * const { status } = await probe(port, { path: '/readyz' });
 * await probe(port, { path: '/readyz', version: '1.1', host: '10.1.2.3:4000' });
 */
export function probe(
  port: number,
  options: { method?: string; path: string; version?: '1.0' | '1.1'; host?: string },
): Promise<ProbeAnswer> {
  const { method = 'GET', path, version = '1.0' } = options;
  const head = [`${method} ${path} HTTP/${version}`];
  if (options.host !== undefined) head.push(`Host: ${options.host}`);
  // HTTP/1.1 keeps the connection open unless told: the answer ends with the connection.
  if (version === '1.1') head.push('Connection: close');
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`${head.join('\r\n')}\r\n\r\n`));
    let raw = '';
    socket.setEncoding('utf8');
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${method} ${path}`)));
    socket.on('data', (chunk: string) => (raw += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const split = raw.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1] ?? 0);
      resolve({ status, body: split < 0 ? '' : raw.slice(split + 4) });
    });
  });
}
