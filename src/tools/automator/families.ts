import type { ToolFamily } from '../family';
import { BackgroundQueue } from './bgQueue';
import { BgStore } from './bgStore';
import { createBackgroundTools } from './bgTools';
import { CronScheduler } from './cronScheduler';
import { CronStore } from './cronStore';
import { createCronTools } from './cronTools';
import { WorkflowEngine } from './workflowEngine';
import { WorkflowStore } from './workflowStore';
import { createWorkflowTools } from './workflowTools';

/**
 * The automator's three tool families, one per config switch
 * (`cron.enabled`, `background.enabled`, `workflow.enabled`). Each persists
 * in the node database, does its background work between `start()` (once the
 * agent tree exists: the runner is fetched through `deps.turns()` only when
 * a job runs) and `close()`, which leaves no timer or run behind.
 * @example
 * const cron = await cronFamily.create(deps);
 * await cron.start?.();
 * // … later
 * await cron.close?.();
 */
export const cronFamily: ToolFamily = {
  name: 'cron',
  agent: 'automator',
  enabled: (config) => config.cron.enabled,
  create: (deps) => {
    const store = new CronStore(deps.db);
    const scheduler = new CronScheduler({
      store,
      turns: deps.turns,
      clock: deps.clock,
      logger: deps.logger.child({ component: 'cron' }),
    });
    return {
      tools: createCronTools({ scheduler, store }),
      start: () => scheduler.start(),
      close: () => scheduler.close(),
    };
  },
};

/** Background prompts with a concurrency limit (`background.concurrency`); see {@link cronFamily}. */
export const backgroundFamily: ToolFamily = {
  name: 'background',
  agent: 'automator',
  enabled: (config) => config.background.enabled,
  create: (deps) => {
    const store = new BgStore(deps.db);
    const queue = new BackgroundQueue({
      store,
      turns: deps.turns,
      clock: deps.clock,
      logger: deps.logger.child({ component: 'background' }),
      concurrency: deps.config.background.concurrency,
    });
    return { tools: createBackgroundTools({ queue, store }), start: () => queue.start(), close: () => queue.close() };
  },
};

/** YAML workflows run as a DAG over the agent tree; see {@link cronFamily}. */
export const workflowFamily: ToolFamily = {
  name: 'workflow',
  agent: 'automator',
  enabled: (config) => config.workflow.enabled,
  create: (deps) => {
    const store = new WorkflowStore(deps.db);
    const engine = new WorkflowEngine({
      store,
      turns: deps.turns,
      agentNames: deps.agentNames,
      clock: deps.clock,
      logger: deps.logger.child({ component: 'workflow' }),
    });
    return { tools: createWorkflowTools({ engine, store }), start: () => engine.start(), close: () => engine.close() };
  },
};
