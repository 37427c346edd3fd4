import type { PageRouter } from '../a2a/bindings/pageRouter';
import { errorMessage } from '../errors';
import { ACCOUNT_METADATA_KEY, type HopAccount } from '../protocol/accounting';
import type { ConsoleSources } from './consoleSources';

/** What `GET /console/api/tasks/:taskId/account` answers: the task's account of its latest turn, if it has one. */
export interface TaskAccountView {
  taskId: string;
  /** The tree of what ran (`protocol/accounting.ts`), remote hops nested; null for a task that carries none. */
  account: HopAccount | null;
}

/**
 * The console's view of one task's account (issue 33): the tree of agents,
 * tools and remote hops with their wall times, tokens, nodes and
 * principals, as the task's metadata carries it, read as the owner from
 * the task rows (every caller's task, any replica's): the data a waterfall
 * of the task is drawn from.
 */
export function consoleAccountRoutes(sources: ConsoleSources, routes: PageRouter): void {
  routes.get('/console/api/tasks/:taskId/account', async (req, res) => {
    const taskId = String(req.params.taskId);
    try {
      const stored = await sources.taskRows().get({ tenant: '', owner: '', everyone: true }, taskId);
      if (!stored) {
        res.status(404).json({ error: { code: 404, message: `no task ${taskId}` } });
        return;
      }
      const account = (stored.task.metadata?.[ACCOUNT_METADATA_KEY] as HopAccount | undefined) ?? null;
      res.json({ taskId, account } satisfies TaskAccountView);
    } catch (err) {
      res.status(503).json({ error: { code: 503, message: `the task rows could not be read: ${errorMessage(err)}` } });
    }
  });
}
