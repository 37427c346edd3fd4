import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Request, type Response } from 'express';
import { pageRouter } from '../a2a/bindings/pageRouter';
import type { Pages } from '../a2a/bindings/routes';
import { SESSION_COOKIE } from '../identity/sessions';
import { consoleAgentRoutes } from './consoleAgents';
import { consoleAssets } from './consoleAssets';
import { consoleBrowseRoutes } from './consoleBrowse';
import { consoleAccountRoutes } from './consoleAccounts';
import { consoleConversationRoutes } from './consoleConversations';
import type { ConsoleSources } from './consoleSources';
import { CONSOLE_CSP, consoleShell, refusalPage, signInPage } from './consolePages';
import { consoleTurnRoutes } from './consoleTurns';

export type { ConsoleSources } from './consoleSources';

/** How often the live stream says it is alive (proxies drop silent connections). */
const HEARTBEAT_MS = 15_000;

/**
 * The console at `/console`: the app shell, sign-in and sign-out, its
 * assets, and the JSON it needs under `/console/api` (agents, remote agents
 * and replicas, tasks, conversations, memory and knowledge, the tool runner,
 * live changes over SSE). Its rows of the route table are the owner's, but
 * for sign-in, sign-out and the assets; a browser refused gets an HTML page
 * saying why (401 sign-in form, 403 refusal), an API call JSON. A change
 * (POST) must come from the console's own origin.
 * @example
 * const pages = consoleRoutes({ nodeName: () => 'lango', graph, remoteCard, timelines, sessions, ... });
 */
export function consoleRoutes(sources: ConsoleSources): Pages {
  const { sessions } = sources;
  const assets = consoleAssets(sources.assetsDir);

  // Written with Node's own response: a refusal of the route table comes before express has seen the request.
  const htmlRefusal = (res: ServerResponse, status: 401 | 403, message: string) => {
    const page = status === 401 && sources.authConfigured ? signInPage(message) : refusalPage(status, message);
    res.writeHead(status, {
      ...HTML_HEADERS,
      ...(status === 401 ? { 'WWW-Authenticate': 'Bearer realm="lango"' } : {}),
      'Content-Length': Buffer.byteLength(page),
    });
    res.end(page);
  };
  const routes = pageRouter({
    name: 'console',
    access: 'owner',
    // The shell's refusal is a page; the API's stays JSON.
    refuse: (req, res, status, message) => {
      // A browser whose cookie the node no longer knows is told so: its owner signs in again.
      const why =
        status === 401 && hasCookie(req) ? 'your console session expired or is unknown: sign in again' : message;
      if ((req.url ?? '').startsWith('/console/api/')) jsonRefusal(res, status, why);
      else htmlRefusal(res, status, why);
    },
  });
  /** A change asked by the owner's console: its own origin, a JSON body (a form post from another site is neither). */
  const apiChange: express.RequestHandler = (req, res, next) => {
    if (!sameOrigin(req)) return jsonRefusal(res, 403, 'a change from another site is refused');
    if (!req.is('application/json')) {
      res.status(415).json({ error: { code: 415, message: 'send the request as application/json' } });
      return;
    }
    next();
  };

  routes.get('/console', (req, res) => {
    html(res).send(consoleShell(sources.nodeName(), { auth: sources.authConfigured, signedIn: hasCookie(req) }));
  });
  const form = express.urlencoded({ extended: false, limit: '8kb' });
  routes.add({ methods: ['POST'], path: '/console/login', access: 'public' }, form, (req, res, next) => {
    if (!sameOrigin(req)) return htmlRefusal(res, 403, 'a sign-in from another site is refused');
    const token = typeof req.body?.token === 'string' ? req.body.token.trim() : '';
    if (!token) return htmlRefusal(res, 401, 'type an owner credential to sign in');
    sessions
      .signIn(token)
      .then((signedIn) => {
        if (!signedIn.ok) {
          html(res.status(signedIn.status)).send(refusalPage(signedIn.status, signedIn.message));
          return;
        }
        res.setHeader('Set-Cookie', cookie(signedIn.sessionId, Math.floor(sources.sessionTtlMs / 1000)));
        res.redirect(303, '/console');
      })
      .catch(next);
  });
  routes.add({ methods: ['POST'], path: '/console/logout', access: 'public' }, (req, res) => {
    if (!sameOrigin(req)) return htmlRefusal(res, 403, 'a sign-out from another site is refused');
    sessions.signOut(req.headers.cookie);
    res.setHeader('Set-Cookie', cookie('', 0));
    res.redirect(303, '/console');
  });

  // The scripts and styles hold no data: served to anyone, so the sign-in and refusal pages can use them.
  routes.add({ methods: ['GET'], path: '/console/assets/:file', access: 'public' }, (req, res) => {
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

  consoleAgentRoutes(sources, routes, apiChange);
  consoleBrowseRoutes(sources, routes);
  consoleAccountRoutes(sources, routes);
  consoleConversationRoutes(sources, routes, apiChange);
  consoleTurnRoutes(sources, routes, apiChange);
  routes.get('/console/api/events', (req, res) => {
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
  return routes.pages();
}

/** A refusal of the console's API, as JSON (Node's own response: it may come before express saw the request). */
function jsonRefusal(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error: { code: status, message } });
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...(status === 401 ? { 'WWW-Authenticate': 'Bearer realm="lango"' } : {}),
  });
  res.end(body);
}

const HTML_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': CONSOLE_CSP,
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

function html(res: Response): Response {
  return res.set(HTML_HEADERS);
}

function cookie(value: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}`;
}

const hasCookie = (req: IncomingMessage) => (req.headers.cookie ?? '').includes(`${SESSION_COOKIE}=`);

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
