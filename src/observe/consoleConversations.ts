import express, { type Request, type RequestHandler, type Response } from 'express';
import type { PageRouter } from '../a2a/bindings/pageRouter';
import { z } from 'zod';
import { errorMessage } from '../errors';
import { OWNER, type Principal } from '../principal';
import { MAX_TITLE_CHARS, type SessionInfo } from '../store/sessions';
import { REPLAY_SESSION_PREFIX } from './consoleReplay';
import { namedCaller, type ConsoleSources } from './consoleSources';

/**
 * What a conversation is, by how its session id starts: the console's and
 * A2A callers' chats and interactive CLI ones, one-shot CLI chats
 * (`lango chat "message"`), replays' scratch conversations, and the turns of
 * jobs (cron, background prompts, workflow steps, the console's tool runs).
 */
export type ConversationKind = 'chat' | 'one-shot' | 'replay' | 'job';

/** How the session ids of one-shot CLI chats start (`lango chat "message"` names them so). */
export const ONE_SHOT_SESSION_PREFIX = 'cli-once:';

/** Session-id prefixes and the kind each marks; any other id is a chat. */
const KINDS: ReadonlyArray<[string, ConversationKind]> = [
  [ONE_SHOT_SESSION_PREFIX, 'one-shot'],
  [REPLAY_SESSION_PREFIX, 'replay'],
  ['cron:', 'job'],
  ['bg:', 'job'],
  ['workflow:', 'job'],
  ['console:', 'job'],
];

/** The kind of the conversation `id`. */
export function conversationKind(id: string): ConversationKind {
  return KINDS.find(([prefix]) => id.startsWith(prefix))?.[1] ?? 'chat';
}

/** Conversations read for a listing or a search (the most recently updated); each kind shows at most {@link SHOWN}. */
const READ = 500;
const SHOWN = 50;
/** Longest search text. */
const MAX_QUERY = 200;

const RenameBody = z.object({ title: z.string().max(MAX_TITLE_CHARS), caller: z.string().optional() }).strict();
const DeleteBody = z.object({ caller: z.string().optional() }).strict();

/**
 * The console's conversation routes, as the owner: the listing (every
 * caller's, grouped by kind, the newest of each; `?q=` finds words in a
 * title, the first words, the id or the caller), one conversation with its
 * messages and any approval it waits for, and the changes: rename and
 * delete (of the caller's conversation the request names, the owner's by
 * default), added to the console's `routes` (the owner's); a change also
 * passes `change`.
 */
export function consoleConversationRoutes(sources: ConsoleSources, routes: PageRouter, change: RequestHandler): void {
  const sessions = () => sources.stores().sessions;
  const failed = (res: Response, what: string, err: unknown) =>
    res.status(503).json({ error: { code: 503, message: `${what} could not be read: ${errorMessage(err)}` } });
  const refused = (res: Response, status: number, message: string) =>
    res.status(status).json({ error: { code: status, message } });
  /** The principal `raw` names, or the 400 already sent. */
  const principalOf = (raw: unknown, res: Response): Principal | undefined => {
    const named = namedCaller(sources, raw);
    if ('error' in named) {
      refused(res, 400, named.error);
      return undefined;
    }
    return named.principal;
  };

  routes.get('/console/api/conversations', async (req, res) => {
    const query = typeof req.query.q === 'string' ? req.query.q.trim().slice(0, MAX_QUERY).toLowerCase() : '';
    try {
      const found = (await sessions().list(OWNER, READ)).filter((s) => !query || matches(s, query));
      const shown = new Map<ConversationKind, number>();
      const conversations = found.flatMap((s) => {
        const kind = conversationKind(s.id);
        const count = shown.get(kind) ?? 0;
        if (count >= SHOWN) return [];
        shown.set(kind, count + 1);
        return [
          {
            id: s.id,
            caller: s.owner,
            kind,
            updatedAt: s.updatedAt,
            ...(s.firstMessage !== undefined ? { firstWords: sources.redact(s.firstMessage) } : {}),
            ...(s.title !== undefined ? { title: sources.redact(s.title) } : {}),
          },
        ];
      });
      res.json({ query, conversations });
    } catch (err) {
      failed(res, 'the conversations', err);
    }
  });

  routes.get('/console/api/conversations/:id', async (req, res) => {
    const principal = principalOf(req.query.caller, res);
    if (!principal) return;
    const id = req.params.id as string;
    try {
      const [messages, state] = await Promise.all([
        sessions().messages(principal, id, { visibleOnly: true, limit: 200 }),
        sessions().state(principal, id),
      ]);
      if (messages.length === 0) return refused(res, 404, `no conversation ${id} of ${principal.id}`);
      const approval = state.pendingApproval;
      res.json({
        id,
        caller: principal.id,
        kind: conversationKind(id),
        messages: messages.map((m) => ({
          role: m.role,
          text: sources.redact(m.content),
          ...(m.author ? { author: m.author } : {}),
          at: m.createdAt,
        })),
        ...(approval
          ? {
              pendingApproval: {
                agent: approval.agentName,
                tool: approval.call.name,
                question: sources.redact(approval.question),
              },
            }
          : {}),
      });
    } catch (err) {
      failed(res, 'the conversation', err);
    }
  });

  routes.post('/console/api/conversations/:id/rename', change, express.json({ limit: '4kb' }), async (req, res) => {
    const body = parsed(RenameBody, req, res);
    if (!body) return;
    const principal = principalOf(body.caller, res);
    if (!principal) return;
    const id = req.params.id as string;
    try {
      if (!(await sessions().rename(principal, id, body.title)))
        return refused(res, 404, `no conversation ${id} of ${principal.id}`);
      res.json({ id, caller: principal.id, title: body.title.trim() });
    } catch (err) {
      failed(res, 'the conversation', err);
    }
  });

  routes.post('/console/api/conversations/:id/delete', change, express.json({ limit: '1kb' }), async (req, res) => {
    const body = parsed(DeleteBody, req, res);
    if (!body) return;
    const principal = principalOf(body.caller, res);
    if (!principal) return;
    const id = req.params.id as string;
    try {
      if (!(await sessions().delete(principal, id)))
        return refused(res, 404, `no conversation ${id} of ${principal.id}`);
      res.json({ id, caller: principal.id, deleted: true });
    } catch (err) {
      failed(res, 'the conversation', err);
    }
  });
}

/** Whether a conversation's title, first words, id or caller holds `query` (lower case). */
function matches(session: SessionInfo, query: string): boolean {
  return [session.title, session.firstMessage, session.id, session.owner].some((text) =>
    text?.toLowerCase().includes(query),
  );
}

/** The request's JSON body as `schema` reads it, or the 400 naming the field. */
function parsed<T>(schema: z.ZodType<T>, req: Request, res: Response): T | undefined {
  const body = schema.safeParse(req.body ?? {});
  if (body.success) return body.data;
  const issue = body.error.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : 'body';
  res.status(400).json({ error: { code: 400, message: `${where}: ${issue?.message ?? 'invalid'}` } });
  return undefined;
}
