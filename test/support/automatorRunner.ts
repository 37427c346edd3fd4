import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RunEvents } from '../../src/agent/events';
import type { ToolContext } from '../../src/agent/tool';
import type { TurnInput, TurnResult, TurnRunner } from '../../src/agent/turn';
import { LangoConfig } from '../../src/config/schema';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { OWNER, type Principal } from '../../src/principal';
import type { Storage } from '../../src/store/index';
import { openSqliteStorage, type SqliteStorage } from '../../src/store/sqlite/storage';
import type { ToolFamily, ToolFamilyDeps, ToolFamilyInstance } from '../../src/toolset/family';
import { testFamilyDeps, unusedModel } from './familyDeps';

/** What a scripted turn answers: a text (completed) or a whole TurnResult. */
export type ScriptedAnswer = string | TurnResult;

/**
 * A TurnRunner test double for the automator: records every TurnInput,
 * answers through `respond`, counts turns under way (for concurrency
 * limits) and ends a turn with an AbortError when its signal fires, as the
 * real runner does.
 * @example
 * const turns = createRecordingRunner(async (input) => `done: ${input.text}`);
 */
export function createRecordingRunner(respond: (input: TurnInput) => ScriptedAnswer | Promise<ScriptedAnswer>) {
  const inputs: TurnInput[] = [];
  let active = 0;
  let maxActive = 0;
  const runner: TurnRunner = {
    async *run(input: TurnInput): AsyncGenerator<ReturnType<typeof RunEvents.agentStart>, TurnResult> {
      inputs.push(input);
      active += 1;
      maxActive = Math.max(maxActive, active);
      const author = input.startAgent ?? 'lango-orchestrator';
      try {
        yield RunEvents.agentStart(author);
        const answer = await untilAborted(Promise.resolve(respond(input)), input.signal);
        return typeof answer === 'string' ? { status: 'completed', text: answer, author } : answer;
      } finally {
        active -= 1;
      }
    },
  };
  return {
    runner,
    inputs,
    get active() {
      return active;
    },
    get maxActive() {
      return maxActive;
    },
  };
}

function untilAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      const error = new Error('the turn was cancelled');
      error.name = 'AbortError';
      reject(error);
    };
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** A promise the test opens by hand: holds scripted turns until released. */
export function createGate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open: () => open() };
}

/** A temp dir with a path for the node database; `cleanup` removes it. */
export function tempDbFile(): { file: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-automator-'));
  return { file: path.join(dir, 'lango.db'), cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A fresh SQLite file per test and cleanups run after it, last registered
 * first (families close before their database file is removed). Call once
 * inside a `describe`.
 */
export function useTempDb(): { readonly file: string; onCleanup(cleanup: () => Promise<void> | void): void } {
  let temp: ReturnType<typeof tempDbFile>;
  const cleanups: (() => Promise<void> | void)[] = [];
  beforeEach(() => {
    temp = tempDbFile();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    temp.cleanup();
  });
  return {
    get file() {
      return temp.file;
    },
    onCleanup: (cleanup) => void cleanups.push(cleanup),
  };
}

/** The node's storage on `file` (a test's own temp file), on `clock` (the node's one clock, the families' too). */
export function openStorage(file: string, clock: () => Date = () => new Date()): SqliteStorage {
  return openSqliteStorage({ file, logger: createMemoryLogger(), clock });
}

/** Family dependencies around a real storage, as the composition root builds them. */
export function automatorDeps(options: {
  storage: Storage;
  clock?: () => Date;
  config?: Parameters<typeof LangoConfig.parse>[0];
  logger?: MemoryLogger;
}): Promise<ToolFamilyDeps> {
  return testFamilyDeps({
    storage: options.storage,
    dataDir: os.tmpdir(),
    config: { ...(options.config as object), security: { enabled: false } },
    logger: options.logger,
    clock: options.clock,
  });
}

/** The agents a workflow step may name in these tests. */
const DEFAULT_AGENTS = ['lango-orchestrator', 'operator', 'navigator', 'vault', 'librarian', 'automator'];

/** A created family (not started yet) and a way to call its tools as the runtime would (arguments parsed first). */
export async function createFamily(family: ToolFamily, deps: ToolFamilyDeps, principal: Principal = OWNER) {
  const instance: ToolFamilyInstance = await family.create(deps);
  const ctx: ToolContext = {
    signal: new AbortController().signal,
    logger: deps.logger,
    principal,
    sessionId: 'test',
    agentName: 'automator',
    approved: false,
  };
  const call = async (name: string, args: Record<string, unknown> = {}, as?: Principal): Promise<any> => {
    const tool = instance.tools.find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    return tool.execute(tool.parameters.parse(args), as ? { ...ctx, principal: as } : ctx);
  };
  return {
    instance,
    call,
    start: async (runtime: { runner: TurnRunner; agentNames?: string[] }) =>
      instance.start?.({
        runner: runtime.runner,
        model: unusedModel,
        agentNames: () => runtime.agentNames ?? DEFAULT_AGENTS,
      }),
    close: async () => instance.close?.(),
  };
}

/** A family created and started on `runtime`, as the node does once its tree exists. */
export async function openFamily(
  family: ToolFamily,
  deps: ToolFamilyDeps,
  runtime: { runner: TurnRunner; agentNames?: string[] },
) {
  const created = await createFamily(family, deps);
  await created.start(runtime);
  return created;
}

export { waitFor } from './waitFor';
