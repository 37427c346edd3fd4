import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { createAuthenticator, CredentialUser, principalOf } from '../identity/identity';
import { peerCertificateOf } from '../a2a/bindings/httpCall';
import type { Callers } from '../identity/callers';
import { authConfigured } from '../identity/identity';
import type { LangoConfig } from '../config/schema';
import { isLoopbackHost } from '../net/host';
import { isOwner } from '../principal';

/** Why a request may not see the node's own workings, or undefined when it may. */
export type AccessRefusal = { status: 401 | 403; message: string } | undefined;

/**
 * Who may look at the node (console, timelines, metrics): the owner. Without
 * `a2a.auth` the owner is whoever reaches a loopback-bound node (the host
 * guard keeps foreign pages out); a node bound to another address without
 * auth shows nothing. With `a2a.auth`, a credential the node maps to the
 * owner. `extraToken` (the metrics token) lets a scraper in too.
 * @example
 * const check = ownerAccess(config, callers);
 * app.get('/metrics', requireOwner(check), serve);
 */
export function ownerAccess(
  config: LangoConfig,
  callers: Callers,
  extraToken?: string,
): (req: Request) => AccessRefusal {
  const auth = createAuthenticator(config, callers);
  const loopbackOwner = !authConfigured(config) && isLoopbackHost(config.server.host);
  const token = extraToken ? digest(extraToken) : undefined;
  return (req) => {
    const presented = bearerOf(req);
    if (token && presented !== undefined && timingSafeEqual(token, digest(presented))) return undefined;
    const found = auth.authenticate({ headers: req.headers, peerCertificate: peerCertificateOf(req) });
    // An OIDC token not validated yet: refused now, known (validated, cached) at the next request.
    const user = found instanceof Promise ? undefined : found;
    // A credential (the local owner token included, with or without a2a.auth) that is the owner's.
    if (user instanceof CredentialUser && isOwner(principalOf(user))) return undefined;
    if (!auth.enabled) {
      return loopbackOwner
        ? undefined
        : {
            status: 403,
            message: `the node listens on ${config.server.host} without a2a.auth: only a configured token may look`,
          };
    }
    if (!user) return { status: 401, message: 'authentication required: present the owner credential' };
    return { status: 403, message: 'only the node owner may look' };
  };
}

/** Middleware refusing with `check`'s reason (JSON with a `WWW-Authenticate` challenge on 401). */
export function requireOwner(check: (req: Request) => AccessRefusal): RequestHandler {
  return (req, res, next) => {
    const refusal = check(req);
    if (!refusal) return next();
    refuse(res, refusal);
  };
}

/** Sends a refusal as JSON. */
export function refuse(res: Response, refusal: NonNullable<AccessRefusal>): void {
  if (refusal.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="lango"');
  res.status(refusal.status).json({ error: { code: refusal.status, message: refusal.message } });
}

const digest = (secret: string) => createHash('sha256').update(secret).digest();

function bearerOf(req: Request): string | undefined {
  const header = req.headers.authorization;
  return typeof header === 'string' && /^bearer /i.test(header) ? header.slice(7).trim() : undefined;
}
