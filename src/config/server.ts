import { z } from 'zod';

/**
 * TLS on every port the node listens on (issue 26): its certificate and key
 * (PEM files), and with `clientCa` mutual TLS: `required` refuses a
 * connection without a client certificate that CA issued, `optional` lets
 * it in and maps a presented certificate to a caller (`a2a.auth.callers[].clientCertificates`).
 */
export const ServerTls = z
  .object({
    cert: z.string().min(1),
    key: z.string().min(1),
    clientCa: z.string().min(1).optional(),
    clientCert: z.enum(['required', 'optional']).optional(),
  })
  .strict()
  .refine((tls) => !tls.clientCert || tls.clientCa, {
    message: 'clientCert needs clientCa (the CA that issues client certificates)',
    path: ['clientCert'],
  });

/** `server.*`: where the node listens for A2A over HTTP, and for gRPC, and with which TLS. */
export const ServerConfig = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(4000),
    /** The A2A gRPC binding's port on `host` (0: any free port); no gRPC when unset. */
    grpcPort: z.number().int().min(0).max(65535).optional(),
    tls: ServerTls.optional(),
  })
  .strict();

/** `server.tls`. */
export type ServerTls = z.infer<typeof ServerTls>;
