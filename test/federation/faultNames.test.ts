import { createFederation, type Federation } from '../../src/federation/federation';
import { createMemoryLogger } from '../../src/log/logger';
import { startMisbehavingPeer, type MisbehavingPeer } from '../support/misbehavingPeer';
import { baseOptions, drain, entries, logged } from '../support/federationRun';

/**
 * Issue 12, "name peer faults right": a peer that answered something
 * unusable is an "invalid answer", never "unreachable"; invalid answers
 * count against the circuit breaker (agent-cards/README.md says why), A2A
 * errors do not.
 */
describe('peer faults and the circuit breaker', () => {
  let peer: MisbehavingPeer;
  let federation: Federation | undefined;
  beforeEach(async () => {
    peer = await startMisbehavingPeer({ name: 'shaky' });
  });
  afterEach(async () => {
    await federation?.close();
    federation = undefined;
    await peer.close();
  });
  const start = async () => {
    const logger = createMemoryLogger();
    federation = createFederation({
      ...baseOptions(logger),
      entries: entries({ name: 'shaky', agentCardUrl: peer.cardUrl }),
      circuit: { failureThreshold: 2, baseBackoffMs: 60_000 },
    });
    await federation.start();
    return logger;
  };

  it('names an unparsable answer an invalid answer, logs it so, and opens the circuit after two of them', async () => {
    const logger = await start();
    peer.call = 'garbage';
    const [agent] = federation!.agents();
    for (let i = 0; i < 2; i++) {
      const { outcome } = await drain(agent, { text: `try ${i}` });
      expect(outcome).toEqual({
        status: 'failed',
        reason: expect.stringMatching(/^remote agent shaky invalid answer: not JSON/),
      });
    }
    const reasons = logged(logger, 'warn', 'remote call failed').map((r) => String(r.meta.reason));
    expect(reasons).toHaveLength(2);
    expect(reasons.join('\n')).not.toContain('unreachable');
    expect(federation!.status()[0]).toMatchObject({
      state: 'open',
      lastError: expect.stringMatching(/^invalid answer: not JSON/),
    });
    expect(federation!.agents()).toEqual([]);
  });

  it('does not count an A2A error: the peer is alive and refusing', async () => {
    await start();
    peer.call = 'a2a-error';
    const [agent] = federation!.agents();
    for (let i = 0; i < 3; i++) {
      const { outcome } = await drain(agent, { text: `try ${i}` });
      expect(outcome).toEqual({
        status: 'failed',
        reason: expect.stringMatching(/^remote agent shaky rejected the request: .*Task not found: nope/),
      });
    }
    expect(federation!.status()[0]).toMatchObject({ state: 'healthy', failures: 0 });
  });

  it('names a peer that is gone unreachable', async () => {
    await start();
    const [agent] = federation!.agents();
    await peer.close();
    const { outcome } = await drain(agent, { text: 'anyone?' });
    expect(outcome).toEqual({
      status: 'failed',
      reason: expect.stringMatching(/^remote agent shaky unreachable: .*ECONNREFUSED/),
    });
    peer = await startMisbehavingPeer({ name: 'spare' }); // for afterEach
  });
});
