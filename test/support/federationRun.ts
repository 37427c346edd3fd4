import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import type { RemoteAgent, RemoteOutcome } from '../../src/agent/agent';
import type { RunEvent } from '../../src/agent/events';
import type { RemoteAgentEntry } from '../../src/config/schema';
import { LangoConfig } from '../../src/config/schema';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { OWNER } from '../../src/principal';

/** Runs one delegated call to the end: the events it streamed and how it ended (or what it threw). */
export async function drain(
  agent: RemoteAgent,
  input: {
    text: string;
    context?: string[];
    state?: Record<string, unknown>;
    metadata?: Record<string, unknown>;
    signal?: AbortSignal;
  },
): Promise<{ events: RunEvent[]; outcome?: RemoteOutcome; error?: Error }> {
  const events: RunEvent[] = [];
  const run = agent.invoke({
    text: input.text,
    context: input.context ?? [],
    principal: OWNER,
    sessionId: 'session-1',
    signal: input.signal ?? new AbortController().signal,
    state: input.state ?? {},
    metadata: input.metadata ?? {},
  });
  try {
    for (;;) {
      const step = await run.next();
      if (step.done) return { events, outcome: step.value };
      events.push(step.value);
    }
  } catch (error) {
    return { events, error: error as Error };
  }
}

/** Remote agent entries as the config schema parses them (defaults applied). */
export function entries(...list: Array<Record<string, unknown>>): RemoteAgentEntry[] {
  return LangoConfig.parse({ a2a: { remoteAgents: list } }).a2a.remoteAgents;
}

/** Common options for loadRemoteAgents / createFederation in tests. */
export function baseOptions(logger: MemoryLogger = createMemoryLogger()) {
  return {
    logger,
    localNames: [
      'lango-orchestrator',
      'operator',
      'navigator',
      'vault',
      'librarian',
      'automator',
      'planner',
      'chronicler',
    ],
    cardsDir: fs.mkdtempSync(path.join(os.tmpdir(), 'lango-cards-')),
    verifyCards: 'ifPresent' as const,
    selfId: 'http://127.0.0.1:1',
    maxHops: 4,
    // Generous: a card on loopback loads long before, however busy the machine; a test of the bound sets its own.
    cardFetchTimeoutMs: 10_000,
  };
}

/** Log lines at `level` whose message contains `text`. */
export function logged(logger: MemoryLogger, level: 'debug' | 'info' | 'warn' | 'error', text: string) {
  return logger.records.filter((r) => r.level === level && r.message.includes(text));
}
