import type { ToolFamily } from '../../toolset/family';
import { BackgroundQueue } from './bgQueue';
import { createBackgroundTools } from './bgTools';
import { CronScheduler } from './cronScheduler';
import { createCronTools } from './cronTools';
import { WorkflowEngine } from './workflowEngine';
import { createWorkflowTools } from './workflowTools';

/**
 * The automator's three tool families, one per config switch
 * (`cron.enabled`, `background.enabled`, `workflow.enabled`). Each keeps its
 * rows in the node's stores and does its background work between `start()`
 * (once the agent tree exists: it brings the runner jobs run through) and
 * `close()`, which leaves no timer or run behind.
 * @example
 * const cron = await cronFamily.create(deps);
 * await cron.start?.({ runner, agentNames: () => tree.agentNames() });
 * // … later
 * await cron.close?.();
 */
export const cronFamily: ToolFamily = {
  name: 'cron',
  agent: 'automator',
  grantedToPeers: true,
  enabled: (config) => config.cron.enabled,
  create: (deps) => {
    const store = deps.stores.cron;
    const scheduler = new CronScheduler({
      store,
      queue: deps.stores.jobQueue,
      principals: deps.principals,
      clock: deps.clock,
      logger: deps.logger.child({ component: 'cron' }),
    });
    return {
      tools: createCronTools({ scheduler, store }),
      // A job added while the scheduler is not started waits in the job queue for the node that runs jobs.
      start: ({ runner, runsJobs }) => (runsJobs === false ? undefined : scheduler.start(runner)),
      close: () => scheduler.close(),
    };
  },
};

/** Background prompts with a concurrency limit (`background.concurrency`); see {@link cronFamily}. */
export const backgroundFamily: ToolFamily = {
  name: 'background',
  agent: 'automator',
  grantedToPeers: true,
  enabled: (config) => config.background.enabled,
  create: (deps) => {
    const store = deps.stores.background;
    const queue = new BackgroundQueue({
      store,
      queue: deps.stores.jobQueue,
      principals: deps.principals,
      clock: deps.clock,
      logger: deps.logger.child({ component: 'background' }),
      concurrency: deps.config.background.concurrency,
    });
    return {
      tools: createBackgroundTools({ queue, store }),
      // A prompt submitted while the queue is not started stays queued for the node that runs jobs.
      start: ({ runner, runsJobs }) => (runsJobs === false ? undefined : queue.start(runner)),
      close: () => queue.close(),
    };
  },
};

/** YAML workflows run as a DAG over the agent tree; see {@link cronFamily}. */
export const workflowFamily: ToolFamily = {
  name: 'workflow',
  agent: 'automator',
  grantedToPeers: true,
  enabled: (config) => config.workflow.enabled,
  create: (deps) => {
    const store = deps.stores.workflows;
    const engine = new WorkflowEngine({
      store,
      clock: deps.clock,
      logger: deps.logger.child({ component: 'workflow' }),
    });
    return {
      tools: createWorkflowTools({ engine, store }),
      start: (runtime) => engine.start(runtime),
      close: () => engine.close(),
    };
  },
};
