import type { Request, Response } from 'express';
import type { PageRouter } from '../a2a/bindings/pageRouter';
import { errorMessage } from '../errors';
import { isOwner, OWNER, OWNER_ID, type Principal } from '../principal';
import { namedCaller, type ConsoleSources } from './consoleSources';
import { isTaskStateName, listConsoleTasks } from './consoleTasks';

/** Rows of each kind the memory and knowledge views show. */
const ROWS = 50;
/** Longest search text. */
const MAX_QUERY = 200;

/**
 * The console's routes for reading what the node holds, as the owner: the
 * task list (tasks with their stored timelines), the callers, and each
 * caller's memory and knowledge. A caller's rows are read as that caller
 * (its own only); the owner's as the owner's own.
 */
export function consoleBrowseRoutes(sources: ConsoleSources, routes: PageRouter): void {
  const stores = () => sources.stores();
  /** The principal named by `?caller=` (default the owner), or the 400 saying what was wrong. */
  const principalOf = (req: Request, res: Response): Principal | undefined => {
    const named = namedCaller(sources, req.query.caller);
    if ('error' in named) {
      res.status(400).json({ error: { code: 400, message: named.error } });
      return undefined;
    }
    return named.principal;
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
