import type { Agent, LlmAgent } from '../../src/agent/agent';
import type { AnyTool } from '../../src/agent/tool';
import type { RunEvent } from '../../src/agent/events';
import type { TurnInput, TurnResult, TurnRunner } from '../../src/agent/turn';
import { createRunner, type RunnerOptions } from '../../src/agent/runner';
import type { Model } from '../../src/llm/model';
import type { SessionStore } from '../../src/store/sessions';
import { openTestStorage } from '../support/storage';

/** A hand-made LLM agent (the runtime only needs the contract's fields). */
export function makeAgent(fields: {
  name: string;
  model?: Model;
  tools?: AnyTool[];
  subAgents?: Agent[];
  instruction?: string;
  keywords?: string[];
  description?: string;
}): LlmAgent {
  return {
    kind: 'llm',
    name: fields.name,
    description: fields.description ?? `${fields.name} agent`,
    instruction: fields.instruction ?? `You are ${fields.name}.`,
    tools: fields.tools ?? [],
    subAgents: fields.subAgents ?? [],
    keywords: fields.keywords ?? [],
    ...(fields.model ? { model: fields.model } : {}),
  };
}

/** A session store on a real database file in a fresh temp dir; `reopen` closes and opens the same file again. */
export function openStore() {
  const test = openTestStorage();
  return {
    logger: test.logger,
    get db() {
      return test.db;
    },
    get sessions(): SessionStore {
      return test.stores.sessions;
    },
    get storage() {
      return test.storage;
    },
    reopen: () => test.reopen(),
    close: () => test.close(),
  };
}

/** Runs one turn to its end, keeping every event. */
export async function collect(
  runner: TurnRunner,
  input: TurnInput,
): Promise<{ events: RunEvent[]; result: TurnResult }> {
  const events: RunEvent[] = [];
  const turn = runner.run(input);
  for (;;) {
    const step = await turn.next();
    if (step.done) return { events, result: step.value };
    events.push(step.value);
  }
}

/** A runner over `root` with the store's sessions and logger and the node's default guardrails; `more` overrides. */
export function runnerFor(
  store: ReturnType<typeof openStore>,
  root: () => LlmAgent,
  more: Partial<RunnerOptions> = {},
): TurnRunner {
  return createRunner({
    tree: { current: root },
    sessions: store.sessions,
    logger: store.logger,
    maxDelegationRounds: 5,
    maxTurnsPerAgent: 10,
    ...more,
  });
}
