import { PeerCircuit, nextBackoff } from '../../src/federation/health';

describe('peer circuit breaker', () => {
  it('opens only at the threshold of consecutive failures, and a success in between resets the count', () => {
    const circuit = new PeerCircuit({ failureThreshold: 3, baseBackoffMs: 100, maxBackoffMs: 1000 });
    expect(circuit.recordFailure()).toBe(false);
    expect(circuit.recordFailure()).toBe(false);
    circuit.recordSuccess();
    expect(circuit.failures).toBe(0);
    expect([circuit.recordFailure(), circuit.recordFailure(), circuit.recordFailure()]).toEqual([false, false, true]);
    expect(circuit.current).toBe('open');
    // Already open: further failures do not "open" it again (one tree rebuild per opening).
    expect(circuit.recordFailure()).toBe(false);
  });

  it('doubles the probe backoff after each failed half-open probe, up to the maximum, and resets on success', () => {
    const circuit = new PeerCircuit({ failureThreshold: 1, baseBackoffMs: 100, maxBackoffMs: 500 });
    circuit.recordFailure();
    const waits = [circuit.backoffMs];
    for (let i = 0; i < 4; i++) {
      circuit.startProbe();
      expect(circuit.current).toBe('half-open');
      circuit.probeFailed();
      waits.push(circuit.backoffMs);
    }
    expect(waits).toEqual([100, 200, 400, 500, 500]);
    circuit.recordSuccess();
    expect([circuit.current, circuit.backoffMs, circuit.failures]).toEqual(['closed', 100, 0]);
    expect(nextBackoff(300, 1000)).toBe(600);
  });
});
