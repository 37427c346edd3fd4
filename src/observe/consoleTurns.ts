import express, { type RequestHandler } from 'express';
import type { PageRouter } from '../a2a/bindings/pageRouter';
import { errorMessage } from '../errors';
import { createReplays, ReplayChanges, ReplayRefusal } from './consoleReplay';
import type { ConsoleSources } from './consoleSources';
import { ACCOUNT_METADATA_KEY, readHopAccount } from '../protocol/accounting';
import type { TaskTimeline } from '../store/timelines';
import { accountRemoteSteps } from './accountWaterfall';
import { buildWaterfall, type RemoteSteps } from './waterfall';

/**
 * The console's routes about one stored turn (by its id, which the task list
 * and a task's timeline give): the turn as a waterfall with its model steps'
 * exchanges (the model inspector), what a replay starts from, and the replay
 * itself (a change, so from the console's own origin), added to the
 * console's `routes` (the owner's). Without timelines there are no turns to
 * read, and no routes.
 */
export function consoleTurnRoutes(sources: ConsoleSources, routes: PageRouter, change: RequestHandler): void {
  const { timelines } = sources;
  if (!timelines) return;
  const replays = createReplays({
    timelines,
    sessions: () => sources.stores().sessions,
    principalOf: (id) => sources.callers().byId(id),
    runTurn: sources.runTurn,
    redact: sources.redact,
  });

  routes.get('/console/api/turns/:id', async (req, res) => {
    const id = req.params.id as string;
    try {
      const turn = await timelines.turn(id);
      if (!turn) {
        res.status(404).json({ error: { code: 404, message: `no turn ${id} is stored` } });
        return;
      }
      const { exchanges = [], ...rest } = turn;
      const model = sources.model();
      res.json({
        turn: rest,
        waterfall: buildWaterfall(turn, { remoteSteps: await remoteStepsOf(sources, turn) }),
        exchanges,
        replay: {
          ...(await replays.draft(turn)),
          ready: turn.ms !== undefined,
          model: model.name,
          otherModels: model.switchable,
        },
      });
    } catch (err) {
      res.status(503).json({ error: { code: 503, message: `the turn could not be read: ${errorMessage(err)}` } });
    }
  });

  routes.post('/console/api/turns/:id/replay', change, express.json({ limit: '256kb' }), async (req, res) => {
    const changes = ReplayChanges.safeParse(req.body ?? {});
    if (!changes.success) {
      const issue = changes.error.issues[0];
      const where = issue?.path.length ? issue.path.join('.') : 'body';
      res.status(400).json({ error: { code: 400, message: `${where}: ${issue?.message ?? 'invalid'}` } });
      return;
    }
    try {
      res.json(await replays.replay(req.params.id as string, changes.data));
    } catch (err) {
      if (err instanceof ReplayRefusal) {
        res.status(err.status).json({ error: { code: err.status, message: err.message } });
        return;
      }
      res.status(500).json({ error: { code: 500, message: `the replay failed: ${errorMessage(err)}` } });
    }
  });
}

/** Bounds of the stored account the waterfall reads: as deep and as many steps as any node keeps. */
const ACCOUNT_READ = { maxDepth: 32, maxSteps: 10_000 };

/**
 * The steps remote nodes ran for `turn`'s remote calls, from its task's
 * account (issue 33), which is its latest turn's: none for a turn still
 * running, an older turn of the task, or a task without an account.
 */
async function remoteStepsOf(sources: ConsoleSources, turn: TaskTimeline): Promise<RemoteSteps | undefined> {
  if (!turn.taskId || turn.ms === undefined || !turn.steps.some((step) => step.kind === 'remote')) return undefined;
  const [latest] = await sources.timelines!.turns({ taskIds: [turn.taskId], limit: 1 });
  if (latest?.id !== turn.id) return undefined;
  const stored = await sources.taskRows().get({ tenant: '', owner: '', everyone: true }, turn.taskId);
  const account = readHopAccount(stored?.task.metadata?.[ACCOUNT_METADATA_KEY], ACCOUNT_READ);
  return account ? accountRemoteSteps(account) : undefined;
}
