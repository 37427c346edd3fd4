import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { ServerTls } from '../config/schema';
import { ConfigError, errorMessage } from '../errors';

/**
 * TLS for the ports the node listens on (`server.tls`, issue 26): its
 * certificate and key, and with `clientCa` mutual TLS. `required` refuses
 * in the handshake a client without a certificate the CA issued;
 * `optional` asks for one and lets the connection in either way — a
 * certificate the CA did not issue then authenticates nobody, and the
 * request is refused like one without credentials (401, `auth.ts`).
 */

/** The `https` server options of `server.tls`, its files read relative to `cwd`. */
export type ServerTlsOptions = https.ServerOptions;

/**
 * Reads the certificate, key and client CA of `tls`.
 * @throws ConfigError naming the key of a file that cannot be read.
 * @example
 * const options = serverTlsOptions(config.server.tls, process.cwd());
 * https.createServer(options, app.http).listen(443);
 */
export function serverTlsOptions(tls: ServerTls, cwd: string): ServerTlsOptions {
  const problems: string[] = [];
  const read = (key: keyof ServerTls, file: string | undefined): Buffer | undefined => {
    if (!file) return undefined;
    try {
      return fs.readFileSync(path.resolve(cwd, file));
    } catch (error) {
      problems.push(`server.tls.${key}: cannot read ${file}: ${errorMessage(error)}`);
      return undefined;
    }
  };
  const options: ServerTlsOptions = {
    cert: read('cert', tls.cert),
    key: read('key', tls.key),
    ca: read('clientCa', tls.clientCa),
    requestCert: Boolean(tls.clientCa),
    // `optional`: the connection is let in, and the request authenticates by other means or not at all.
    rejectUnauthorized: tls.clientCert === 'required',
    minVersion: 'TLSv1.2',
  };
  if (problems.length > 0) throw new ConfigError('cannot read the files of server.tls', problems);
  return options;
}

/** An HTTP server for `listener`: HTTPS with `tls`, plain HTTP without. */
export function createNodeServer(
  listener: http.RequestListener,
  tls: ServerTlsOptions | undefined,
): http.Server | https.Server {
  return tls ? https.createServer(tls, listener) : http.createServer(listener);
}
