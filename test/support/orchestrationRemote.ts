import type { RemoteAgent, RemoteOutcome } from '../../src/agent/agent';
import type { RunEvent } from '../../src/agent/events';

/**
 * A plain object implementing RemoteAgent, for tree-building tests: it
 * answers every invocation with a fixed completed outcome (no network).
 */
export function fixedRemoteAgent(fields: { name: string; description: string; keywords?: string[] }): RemoteAgent {
  return {
    kind: 'remote',
    name: fields.name,
    description: fields.description,
    keywords: fields.keywords ?? [],
    cardUrl: `http://127.0.0.1:1/${fields.name}/.well-known/agent-card.json`,
    // eslint-disable-next-line require-yield
    async *invoke(invocation): AsyncGenerator<RunEvent, RemoteOutcome> {
      return {
        status: 'completed',
        text: `${fields.name} got: ${invocation.text}`,
      };
    },
  };
}
