import fs from 'node:fs';
import path from 'node:path';
import express, { type Request, type Response, type Router } from 'express';
import { refuse, type AccessRefusal } from './access';
import { SESSION_COOKIE, type ConsoleSessions } from './consoleSessions';
import { CONSOLE_CSP, consoleShell, refusalPage, signInPage } from './consolePages';
import { toSvg, type AgentGraph } from './graph';
import type { TaskTimeline, Timelines } from './timeline';

/** What the console reads from the node, when a page asks. */
export interface ConsoleSources {
  /** The node's name as its card shows it. */
  nodeName: () => string;
  /** The agent tree and federation, with each peer's health. */
  graph: () => AgentGraph;
  /** The card held for a remote agent, undefined for an unknown name. */
  remoteCard: (name: string) => unknown;
  /** Recent turns and their changes; undefined when timelines are off. */
  timelines?: Timelines;
  sessions: ConsoleSessions;
  /** Whether credentials are configured (then the console asks for the owner's token). */
  authConfigured: boolean;
  redact: (text: string) => string;
  /** How long a console session lives, for the cookie's Max-Age. */
  sessionTtlMs: number;
  /** Where the compiled script and styles are (`dist/console`). */
  assetsDir: string;
}

/** One row of the task list: a task's latest turn, summarised. */
export interface TaskSummary {
  taskId?: string;
  sessionId: string;
  caller: string;
  /** `running` while the turn runs, else its outcome. */
  state: string;
  agent?: string;
  startedAt: string;
  ms?: number;
  steps: number;
}

/** How often the live stream says it is alive (proxies drop silent connections). */
const HEARTBEAT_MS = 15_000;

/**
 * The console at `/console`: the app shell, sign-in and sign-out, its
 * assets, and the JSON it needs under `/console/api` (agents as JSON and SVG,
 * a remote's card, tasks filtered by state and caller, live changes over
 * SSE). Every route checks `sessions.access`; a browser refused gets an HTML
 * page saying why (401 sign-in form, 403 refusal), an API call JSON.
 * @example
 * app.use(consoleRoutes({ nodeName: () => 'lango', graph, remoteCard, timelines, sessions, ... }));
 */
export function consoleRoutes(sources: ConsoleSources): Router {
  const routes = express.Router();
  const { sessions } = sources;

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

  // The script and styles hold no data: served to anyone, so the sign-in and refusal pages can use them.
  routes.get('/console/assets/:file', (req, res) => {
    const type = ASSETS[req.params.file as string];
    if (!type) return res.status(404).json({ error: { code: 404, message: 'no such console asset' } });
    const file = path.join(sources.assetsDir, req.params.file as string);
    fs.readFile(file, (err, body) => {
      if (err) {
        html(res.status(500)).send(refusalPage(500, 'the console is not built: run `npm run build`'));
        return;
      }
      res.setHeader('Cache-Control', 'no-cache');
      res.type(type).send(body);
    });
  });

  routes.get('/console/api/agents', apiOwner, (_req, res) => {
    res.json(sources.graph());
  });
  routes.get('/console/api/agents.svg', apiOwner, (_req, res) => {
    res.type('image/svg+xml').send(toSvg(sources.graph()));
  });
  routes.get('/console/api/agents/:name/card', apiOwner, (req, res) => {
    const card = sources.remoteCard(req.params.name as string);
    if (card === undefined) {
      res.status(404).json({ error: { code: 404, message: `no remote agent named ${req.params.name}` } });
      return;
    }
    res.type('application/json').send(sources.redact(JSON.stringify(card, null, 2)));
  });
  routes.get('/console/api/tasks', apiOwner, (req, res) => {
    const state = typeof req.query.state === 'string' ? req.query.state : '';
    const caller = typeof req.query.caller === 'string' ? req.query.caller.trim() : '';
    const tasks = summarise(sources.timelines?.recent() ?? []).filter(
      (task) => (!state || task.state === state) && (!caller || task.caller.includes(caller)),
    );
    res.json({ tasks, timelines: sources.timelines !== undefined });
  });
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

/** Console asset names and their content types: nothing else is served from the folder. */
const ASSETS: Record<string, string> = { 'console.js': 'text/javascript', 'console.css': 'text/css' };

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

/** The task list: each task's (or task-less turn's) latest turn, newest first. */
export function summarise(turns: readonly TaskTimeline[]): TaskSummary[] {
  const seen = new Set<string>();
  const tasks: TaskSummary[] = [];
  for (const turn of turns) {
    if (turn.taskId) {
      if (seen.has(turn.taskId)) continue;
      seen.add(turn.taskId);
    }
    tasks.push({
      taskId: turn.taskId,
      sessionId: turn.sessionId,
      caller: turn.caller,
      state: turn.ms === undefined ? 'running' : (turn.status ?? 'completed'),
      agent: turn.agent,
      startedAt: turn.startedAt,
      ms: turn.ms,
      steps: turn.steps.length,
    });
  }
  return tasks;
}
