import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RunEvents } from '../../src/agent/events';
import type { ToolContext } from '../../src/agent/tool';
import type { TurnInput, TurnResult, TurnRunner } from '../../src/agent/turn';
import { LangoConfig } from '../../src/config/schema';
import type { Model } from '../../src/llm/model';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { SecretRegistry } from '../../src/log/redact';
import { openDatabase, type SqliteDatabase } from '../../src/store/database';
import type { ToolFamily, ToolFamilyDeps, ToolFamilyInstance } from '../../src/tools/family';

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

const unusedModel: Model = {
  name: 'unused',
  stream: () => {
    throw new Error('the automator tests never call the model');
  },
};

/** Family dependencies around a real database and a given runner. */
export function automatorDeps(options: {
  db: SqliteDatabase;
  runner: TurnRunner;
  clock?: () => Date;
  agentNames?: string[];
  config?: Parameters<typeof LangoConfig.parse>[0];
  logger?: MemoryLogger;
}): ToolFamilyDeps {
  return {
    config: LangoConfig.parse(options.config ?? {}),
    dataDir: os.tmpdir(),
    db: options.db,
    logger: options.logger ?? createMemoryLogger(),
    secrets: new SecretRegistry(),
    clock: options.clock ?? (() => new Date()),
    model: unusedModel,
    turns: () => options.runner,
    toolsChanged: () => {},
    agentNames: () =>
      options.agentNames ?? ['lango-orchestrator', 'operator', 'navigator', 'vault', 'librarian', 'automator'],
  };
}

/** An opened family and a way to call its tools as the runtime would (arguments parsed first). */
export async function openFamily(family: ToolFamily, deps: ToolFamilyDeps) {
  const instance: ToolFamilyInstance = await family.create(deps);
  await instance.start?.();
  const ctx: ToolContext = {
    signal: new AbortController().signal,
    logger: deps.logger,
    sessionId: 'test',
    agentName: 'automator',
    approved: false,
  };

  const call = async (name: string, args: Record<string, unknown> = {}): Promise<any> => {
    const tool = instance.tools.find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    return tool.execute(tool.parameters.parse(args), ctx);
  };
  return { instance, call, close: async () => instance.close?.() };
}

/** Polls `check` every 20 ms until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 5000,
  what = 'condition',
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export { openDatabase };
