import { createRunner } from '../../../src/agent/runner';
import { runToEnd } from '../../../src/agent/turn';
import { createMemoryLogger } from '../../../src/log/logger';
import { createChronicler } from '../../../src/tools/chronicler/family';
import { makeAgent, openStore } from '../../agent/helpers';
import { configOf } from '../../support/librarianHarness';
import { ScriptedModel } from '../../support/scriptedModel';
import { OWNER } from '../../../src/principal';

describe('chronicler wired to the real runner', () => {
  it('observes persisted turns after they answer and offers the memories to a later turn', async () => {
    const store = openStore();
    const observer = new ScriptedModel([
      { text: '- The user is allergic to peanuts.\n- The user wants a dinner booking for Friday at 19:30.' },
    ]);
    const memory = createChronicler({
      config: configOf({ observationalMemory: { observeAfterTokens: 30, reflectAfterObservations: 10 } }),
      stores: store.storage.stores,
      logger: createMemoryLogger(),
      model: observer,
    });
    // The hook runs once the turn is committed, after the answer: this promise says it ran.
    let turnEnded!: () => void;
    const firstTurnEnded = new Promise<void>((resolve) => (turnEnded = resolve));
    const agentModel = new ScriptedModel([
      { text: 'Noted, no peanuts. I will book dinner for Friday at 19:30.' },
      (request) => ({
        text: request.instruction.includes('allergic to peanuts') ? 'Remembered: no peanuts.' : 'No memory.',
      }),
    ]);
    const runner = createRunner({
      tree: { current: () => makeAgent({ name: 'lango-orchestrator', model: agentModel }) },
      sessions: store.sessions,
      logger: createMemoryLogger(),
      maxDelegationRounds: 3,
      maxTurnsPerAgent: 3,
      contextProvider: memory.contextProvider,
      onTurnEnd: (turn) => {
        memory.onTurnEnd(turn);
        turnEnded();
      },
    });
    try {
      const first = await runToEnd(runner, {
        principal: OWNER,
        sessionId: 'ctx-dinner',
        text: 'Please book dinner for Friday at 19:30. I am allergic to peanuts, so the restaurant must know.',
      });
      expect(first.text).toBe('Noted, no peanuts. I will book dinner for Friday at 19:30.');
      await firstTurnEnded;
      await memory.chronicler.idle();
      expect(observer.requests[0].messages[0].content).toContain('user: Please book dinner for Friday');
      expect(observer.requests[0].messages[0].content).toContain('assistant (lango-orchestrator): Noted, no peanuts.');
      const observations = await memory.chronicler.store.observations(OWNER, { sessionId: 'ctx-dinner', limit: 5 });
      expect(observations.map((o) => o.content)).toEqual([
        'The user is allergic to peanuts.',
        'The user wants a dinner booking for Friday at 19:30.',
      ]);

      const second = await runToEnd(runner, {
        principal: OWNER,
        sessionId: 'ctx-lunch',
        text: 'Any food allergies I should tell the caterer about?',
      });
      expect(second.text).toBe('Remembered: no peanuts.');
      expect(agentModel.requests[1].instruction).toContain('[observation] The user is allergic to peanuts.');
    } finally {
      await memory.close?.();
      await store.close();
    }
  });
});
