import { createRunner } from '../../../src/agent/runner';
import { runToEnd } from '../../../src/agent/turn';
import { createMemoryLogger } from '../../../src/log/logger';
import { createChronicler } from '../../../src/tools/chronicler/family';
import { makeAgent, openStore } from '../../agent/helpers';
import { configOf } from '../../support/librarianHarness';
import { ScriptedModel } from '../../support/scriptedModel';

describe('chronicler wired to the real runner', () => {
  it('observes persisted turns after they answer and offers the memories to a later turn', async () => {
    const store = openStore();
    const observer = new ScriptedModel([
      { text: '- The user is allergic to peanuts.\n- The user wants a dinner booking for Friday at 19:30.' },
    ]);
    const memory = createChronicler({
      config: configOf({ observationalMemory: { observeAfterTokens: 30, reflectAfterObservations: 10 } }),
      db: store.db,
      logger: createMemoryLogger(),
      clock: () => new Date(),
      model: observer,
    });
    const agentModel = new ScriptedModel([
      { text: 'Noted, no peanuts. I will book dinner for Friday at 19:30.' },
      (request) => ({
        text: request.instruction.includes('allergic to peanuts') ? 'Remembered: no peanuts.' : 'No memory.',
      }),
    ]);
    const runner = createRunner({
      root: () => makeAgent({ name: 'lango-orchestrator', model: agentModel }),
      sessions: store.sessions,
      logger: createMemoryLogger(),
      maxDelegationRounds: 3,
      maxTurnsPerAgent: 3,
      contextProvider: memory.contextProvider,
      onTurnEnd: memory.onTurnEnd,
    });
    try {
      const first = await runToEnd(runner, {
        sessionId: 'ctx-dinner',
        text: 'Please book dinner for Friday at 19:30. I am allergic to peanuts, so the restaurant must know.',
      });
      expect(first.text).toBe('Noted, no peanuts. I will book dinner for Friday at 19:30.');
      for (let i = 0; i < 200 && memory.chronicler.store.observations({ limit: 5 }).length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await memory.chronicler.idle();
      expect(observer.requests[0].messages[0].content).toContain('user: Please book dinner for Friday');
      expect(observer.requests[0].messages[0].content).toContain('assistant (lango-orchestrator): Noted, no peanuts.');
      expect(memory.chronicler.store.observations({ sessionId: 'ctx-dinner', limit: 5 }).map((o) => o.content)).toEqual(
        ['The user is allergic to peanuts.', 'The user wants a dinner booking for Friday at 19:30.'],
      );

      const second = await runToEnd(runner, {
        sessionId: 'ctx-lunch',
        text: 'Any food allergies I should tell the caterer about?',
      });
      expect(second.text).toBe('Remembered: no peanuts.');
      expect(agentModel.requests[1].instruction).toContain('[observation] The user is allergic to peanuts.');
    } finally {
      await memory.close?.();
      store.close();
    }
  });
});
