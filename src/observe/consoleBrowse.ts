import type { Request, Response } from 'express';
import type { PageRouter } from '../a2a/bindings/pageRouter';
import { errorMessage } from '../errors';
import { isOwner, OWNER, OWNER_ID, type Principal } from '../principal';
import type { ConsoleSources } from './consoleSources';
import { isTaskStateName, listConsoleTasks } from './consoleTasks';

/** Conversations a listing shows. */
const CONVERSATIONS = 50;
/** Rows of each kind the memory and knowledge views show. */
const ROWS = 50;
/** Longest search text. */
const MAX_QUERY = 200;

/**
 * The console's routes for reading what the node holds, as the owner: the
 * task list (tasks with their stored timelines), conversations (each with
 * its first words, reopened with its messages and any approval it waits
 * for), the callers, and each caller's memory and knowledge. A caller's rows
 * are read as that caller (its own only); the owner's as the owner's own.
 */
export function consoleBrowseRoutes(sources: ConsoleSources, routes: PageRouter): void {
  const stores = () => sources.stores();
  /** The principal named by `?caller=` (default the owner), or the 400 saying what was wrong. */
  const principalOf = (req: Request, res: Response): Principal | undefined => {
    const id = typeof req.query.caller === 'string' ? req.query.caller.trim() : OWNER_ID;
    if (!id || id.length > 200) {
      res.status(400).json({ error: { code: 400, message: 'caller: name a caller (owner, or a caller id)' } });
      return undefined;
    }
    return id === OWNER_ID ? OWNER : sources.callers().byId(id);
  };
  const failed = (res: Response, what: string, err: unknown) =>
    res.status(503).json({ error: { code: 503, message: `${what} could not be read: ${errorMessage(err)}` } });

  routes.get('/console/api/tasks', async (req, res) => {
    const state = typeof req.query.state === 'string' ? req.query.state : '';
    const caller = typeof req.query.caller === 'string' ? req.query.caller.trim() : '';
    if (state && !isTaskStateName(state)) {
      res.status(400).json({ error: { code: 400, message: `state: no task state named ${state}` } });
      return;
    }
    const filter = { state: state || undefined, caller: caller || undefined };
    const { timelines } = sources;
    try {
      const tasks = await listConsoleTasks(
        sources.taskRows(),
        timelines ? (query) => timelines.turns(query) : async () => [],
        filter,
      );
      res.json({ tasks, timelines: timelines !== undefined });
    } catch (err) {
      failed(res, 'the task rows', err);
    }
  });

  routes.get('/console/api/conversations', async (_req, res) => {
    try {
      const sessions = await stores().sessions.list(OWNER, CONVERSATIONS);
      res.json({
        conversations: sessions.map((s) => ({
          id: s.id,
          caller: s.owner,
          updatedAt: s.updatedAt,
          ...(s.firstMessage !== undefined ? { firstWords: sources.redact(s.firstMessage) } : {}),
        })),
      });
    } catch (err) {
      failed(res, 'the conversations', err);
    }
  });
  routes.get('/console/api/conversations/:id', async (req, res) => {
    const principal = principalOf(req, res);
    if (!principal) return;
    const id = req.params.id as string;
    try {
      const [messages, state] = await Promise.all([
        stores().sessions.messages(principal, id, { visibleOnly: true, limit: 200 }),
        stores().sessions.state(principal, id),
      ]);
      if (messages.length === 0) {
        res.status(404).json({ error: { code: 404, message: `no conversation ${id} of ${principal.id}` } });
        return;
      }
      const approval = state.pendingApproval;
      res.json({
        id,
        caller: principal.id,
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

  routes.get('/console/api/callers', async (_req, res) => {
    const ids = new Set<string>([OWNER_ID]);
    for (const credential of sources.callers().credentials) {
      if (!isOwner(credential.principal)) ids.add(credential.principal.id);
    }
    try {
      for (const session of await stores().sessions.list(OWNER, 500)) ids.add(session.owner);
      res.json({ callers: [...ids] });
    } catch (err) {
      failed(res, 'the callers', err);
    }
  });

  routes.get('/console/api/memory', async (req, res) => {
    const principal = principalOf(req, res);
    if (!principal) return;
    const scope = { limit: ROWS, ownOnly: true };
    try {
      const [observations, reflections] = await Promise.all([
        stores().memory.observations(principal, scope),
        stores().memory.reflections(principal, scope),
      ]);
      res.json({
        caller: principal.id,
        // Newest first, as a person reads a feed.
        observations: observations.reverse().map((o) => ({ ...o, content: sources.redact(o.content) })),
        reflections: reflections.reverse().map((r) => ({ ...r, content: sources.redact(r.content) })),
      });
    } catch (err) {
      failed(res, 'the memory', err);
    }
  });
  routes.get('/console/api/knowledge', async (req, res) => {
    const principal = principalOf(req, res);
    if (!principal) return;
    const query = typeof req.query.q === 'string' ? req.query.q.trim().slice(0, MAX_QUERY) : '';
    const { knowledge, graph } = stores();
    try {
      const entries = query
        ? (await knowledge.searchKnowledge(principal, query, { limit: ROWS })).filter((e) => e.owner === principal.id)
        : await knowledge.recentKnowledge(principal, { limit: ROWS, ownOnly: true });
      // The graph has no owner column in its answers: a caller's own statements; the owner's view is everyone's.
      const triples = await graph.query(principal, {}, ROWS);
      res.json({
        caller: principal.id,
        query,
        knowledge: entries.map((e) => ({
          id: e.id,
          kind: e.kind,
          content: sources.redact(e.content),
          tags: e.tags,
          source: e.source,
          createdAt: e.createdAt,
        })),
        graph: { everyCaller: isOwner(principal), triples },
      });
    } catch (err) {
      failed(res, 'the knowledge', err);
    }
  });
}
