import fs from 'node:fs';
import express, { type Request, type Response, type Router } from 'express';
import { refuse, type AccessRefusal } from './access';
import { consoleAgentRoutes } from './consoleAgents';
import { consoleAssets } from './consoleAssets';
import { consoleBrowseRoutes } from './consoleBrowse';
import { consoleAccountRoutes } from './consoleAccounts';
import { SESSION_COOKIE } from './consoleSessions';
import type { ConsoleSources } from './consoleSources';
import { CONSOLE_CSP, consoleShell, refusalPage, signInPage } from './consolePages';

export type { ConsoleSources } from './consoleSources';

/** How often the live stream says it is alive (proxies drop silent connections). */
const HEARTBEAT_MS = 15_000;

/**
 * The console at `/console`: the app shell, sign-in and sign-out, its
 * assets, and the JSON it needs under `/console/api` (agents, remote agents
 * and replicas, tasks, conversations, memory and knowledge, the tool runner,
 * live changes over SSE). Every route checks `sessions.access`; a browser
 * refused gets an HTML page saying why (401 sign-in form, 403 refusal), an
 * API call JSON. A change (POST) must come from the console's own origin.
 * @example
 * app.use(consoleRoutes({ nodeName: () => 'lango', graph, remoteCard, timelines, sessions, ... }));
 */
export function consoleRoutes(sources: ConsoleSources): Router {
  const routes = express.Router();
  const { sessions } = sources;
  const assets = consoleAssets(sources.assetsDir);

  const htmlRefusal = (res: Response, refusal: NonNullable<AccessRefusal>) => {
    html(res.status(refusal.status));
    if (refusal.status === 401) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="lango"');
      res.send(sources.authConfigured ? signInPage(refusal.message) : refusalPage(401, refusal.message));
    } else res.send(refusalPage(403, refusal.message));
  };
  const pageOwner: express.RequestHandler = (req, res, next) => {
    const refusal = sessions.access(req);
    if (refusal) return htmlRefusal(res, refusal);
    next();
  };
  const apiOwner: express.RequestHandler = (req, res, next) => {
    const refusal = sessions.access(req);
    if (refusal) return refuse(res, refusal);
    next();
  };
  /** A change asked by the owner's console: its own origin, a JSON body (a form post from another site is neither). */
  const apiChange: express.RequestHandler = (req, res, next) => {
    if (!sameOrigin(req)) return refuse(res, { status: 403, message: 'a change from another site is refused' });
    if (!req.is('application/json')) {
      res.status(415).json({ error: { code: 415, message: 'send the request as application/json' } });
      return;
    }
    next();
  };

  routes.get(['/console', '/console/'], pageOwner, (req, res) => {
    html(res).send(consoleShell(sources.nodeName(), { auth: sources.authConfigured, signedIn: hasCookie(req) }));
  });
  routes.post('/console/login', express.urlencoded({ extended: false, limit: '8kb' }), (req, res) => {
    if (!sameOrigin(req)) return htmlRefusal(res, { status: 403, message: 'a sign-in from another site is refused' });
    const token = typeof req.body?.token === 'string' ? req.body.token.trim() : '';
    if (!token) return htmlRefusal(res, { status: 401, message: 'type the owner token to sign in' });
    const signedIn = sessions.signIn(token);
    if (!signedIn.ok) {
      const message =
        signedIn.refusal.status === 401 ? 'that token is not one this node accepts' : signedIn.refusal.message;
      html(res.status(signedIn.refusal.status)).send(refusalPage(signedIn.refusal.status, message));
      return;
    }
    res.setHeader('Set-Cookie', cookie(signedIn.sessionId, Math.floor(sources.sessionTtlMs / 1000)));
    res.redirect(303, '/console');
  });
  routes.post('/console/logout', (req, res) => {
    if (!sameOrigin(req)) return htmlRefusal(res, { status: 403, message: 'a sign-out from another site is refused' });
    sessions.signOut(req);
    res.setHeader('Set-Cookie', cookie('', 0));
    res.redirect(303, '/console');
  });

  // The scripts and styles hold no data: served to anyone, so the sign-in and refusal pages can use them.
  routes.get('/console/assets/:file', (req, res) => {
    const asset = assets.get(req.params.file as string);
    if (!asset) return res.status(404).json({ error: { code: 404, message: 'no such console asset' } });
    fs.readFile(asset.file, (err, body) => {
      if (err) {
        html(res.status(500)).send(refusalPage(500, 'the console is not built: run `npm run build`'));
        return;
      }
      res.setHeader('Cache-Control', 'no-cache');
      res.type(asset.type).send(body);
    });
  });

  routes.use(consoleAgentRoutes(sources, { owner: apiOwner, change: apiChange }));
  routes.use(consoleBrowseRoutes(sources, { owner: apiOwner }));
  routes.use(consoleAccountRoutes(sources, { owner: apiOwner }));
  routes.get('/console/api/events', apiOwner, (req, res) => {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    res.write('retry: 2000\n\n');
    res.write(`event: ready\ndata: {}\n\n`);
    const send = (text: string) => {
      if (!res.writableEnded && !res.destroyed) res.write(text);
    };
    const unsubscribe = sources.timelines?.subscribe((change) => {
      send(`event: change\ndata: ${JSON.stringify(change)}\n\n`);
    });
    const heartbeat = setInterval(() => send(': alive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    req.on('close', () => {
      clearInterval(heartbeat);
      unsubscribe?.();
    });
  });
  return routes;
}

function html(res: Response): Response {
  return res
    .type('html')
    .setHeader('Content-Security-Policy', CONSOLE_CSP)
    .setHeader('Cache-Control', 'no-store')
    .setHeader('X-Content-Type-Options', 'nosniff');
}

function cookie(value: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}`;
}

const hasCookie = (req: Request) => (req.headers.cookie ?? '').includes(`${SESSION_COOKIE}=`);

/** A form post from this node's own pages: no `Origin`, or one naming the host the request came to. */
function sameOrigin(req: Request): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}
