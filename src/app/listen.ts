import type http from 'node:http';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { A2AServer } from '../a2a/server';
import type { LangoConfig } from '../config/schema';
import { LangoError } from '../errors';
import { createNodeServer, type ServerTlsOptions } from '../identity/serverTls';
import type { Logger } from '../log/logger';

/** What {@link listenNode} needs: the node's config, server, TLS and logger, and who closes what it opens. */
export interface ListenOptions {
  config: LangoConfig;
  a2a: A2AServer;
  tls: ServerTlsOptions | undefined;
  logger: Logger;
  /** Takes the close of the HTTP server once it listens (closed with the node, in reverse order). */
  onListening(server: http.Server | https.Server): void;
}

/**
 * Starts listening on `server.host:server.port`, then the gRPC binding on
 * `server.grpcPort` when set; resolves with the base URL and the gRPC port.
 */
export async function listenNode(options: ListenOptions): Promise<{ url: string; grpcPort: number | undefined }> {
  const { config, a2a, tls, logger } = options;
  const url = await new Promise<string>((resolve, reject) => {
    const listening = createNodeServer(a2a.app, tls);
    const failed = (err: Error) => reject(listenError(err, config.server.host, config.server.port));
    listening.once('error', failed);
    listening.listen(config.server.port, config.server.host, () => {
      // From now on a server error (say, out of descriptors on accept) is logged, never thrown.
      listening.off('error', failed);
      listening.on('error', (err) => logger.error('http server error', { error: err.message }));
      options.onListening(listening);
      const { port } = listening.address() as AddressInfo;
      const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
      const url = `${tls ? 'https' : 'http'}://${host}:${port}`;
      a2a.setPublicUrl(url);
      resolve(url);
    });
  });
  // After the HTTP port: the card names gRPC at the public URL's host. `a2a.close` closes it.
  let grpcPort: number | undefined;
  if (config.server.grpcPort !== undefined) {
    grpcPort = await a2a
      .listenGrpc(config.server.host, config.server.grpcPort, tls)
      .catch((err: NodeJS.ErrnoException) => {
        throw listenError(err, config.server.host, config.server.grpcPort!, 'server.grpcPort');
      });
  }
  return { url, grpcPort };
}

/** Why the node could not listen, as one line naming the setting to change. */
function listenError(err: NodeJS.ErrnoException, host: string, port: number, portKey = 'server.port'): LangoError {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const why: Record<string, string | undefined> = {
    EADDRINUSE: `the port is already in use by another process (change ${portKey}${portKey === 'server.port' ? ' or PORT' : ''})`,
    EACCES: `permission denied (ports below 1024 need privileges; change ${portKey})`,
    EADDRNOTAVAIL: 'the address is not one of this machine (server.host)',
    ENOTFOUND: 'the host name does not resolve (server.host)',
    EAI_AGAIN: 'the host name could not be resolved now (server.host)',
  };
  const reason = why[err.code ?? ''] ?? (portKey === 'server.port' ? err.message : `${err.message} (${portKey})`);
  return new LangoError(`cannot listen on ${where}: ${reason}`, { cause: err });
}

/** Stops accepting connections and ends idle and active ones, so close never waits on a keep-alive client. */
export function closeServer(server: http.Server | https.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
