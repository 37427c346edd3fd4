import type { ContextRequest } from '../../agent/turnState';
import type { Model } from '../../llm/model';
import type { Principal } from '../../principal';
import type { ToolFamily, ToolFamilyDeps, ToolFamilyInstance } from '../../toolset/family';
import { Chronicler, type SessionMessage } from './chronicler';
import { createChroniclerTools } from './tools';

/** The chronicler family once created: its tools plus the hooks the composition root wires. */
export interface ChroniclerInstance extends ToolFamilyInstance {
  chronicler: Chronicler;
  /** Call after each committed turn with the session's messages; returns at once. */
  onTurnEnd(turn: { principal: Principal; sessionId: string; messages: SessionMessage[] }): void;
  /** The principal's relevant memories for a turn's prompt, within `observationalMemory.recallBudgetTokens`. */
  contextProvider(request: ContextRequest): Promise<string | undefined>;
}

/**
 * Builds observational memory on the node's memory store; it condenses with
 * `model` (a test's), else with the node's model from `start`.
 * @example
 * const memory = createChronicler({ ...deps, model });
 * runner.onTurnEnd = memory.onTurnEnd;           // after each committed turn
 * prompt.contextProviders.push(memory.contextProvider);
 */
export function createChronicler(
  deps: Pick<ToolFamilyDeps, 'config' | 'stores' | 'logger'> & { model?: Model },
): ChroniclerInstance {
  const chronicler = new Chronicler({
    store: deps.stores.memory,
    model: deps.model,
    logger: deps.logger.child({ component: 'chronicler' }),
    settings: deps.config.observationalMemory,
    requestTimeoutMs: deps.config.agent.requestTimeoutMs,
  });
  return {
    tools: createChroniclerTools({ chronicler }),
    chronicler,
    start: ({ model }) => {
      if (!deps.model) chronicler.useModel(model);
    },
    onTurnEnd: (turn) => chronicler.onTurnEnd(turn),
    contextProvider: (request) => chronicler.contextProvider(request),
    close: () => chronicler.close(),
  };
}

/** The chronicler's row in the tool family table: on with `observationalMemory.enabled`. */
export const chroniclerFamily: ToolFamily = {
  name: 'chronicler',
  agent: 'chronicler',
  grantedToPeers: true,
  enabled: (config) => config.observationalMemory.enabled,
  create: (deps) => createChronicler(deps),
};
