import { CounterSeries, HistogramSeries } from '../../src/observe/series';
import { parseScrape } from '../support/prometheus';

describe('the node’s own metric series', () => {
  it('prints counters and cumulative histograms in the text format a Prometheus parser reads, labels escaped', () => {
    const requests = new CounterSeries({
      name: 'x_requests_total',
      help: 'Requests\nby "method"',
      labelNames: ['method', 'status'],
    });
    requests.inc(1, 'SendMessage', '200');
    requests.inc(2, 'SendMessage', '200');
    requests.inc(1, 'a"b\\c\nd', '404');
    const turns = new HistogramSeries({
      name: 'x_turn_seconds',
      help: 'Turns',
      labelNames: ['status'],
      buckets: [0.1, 1],
    });
    for (const seconds of [0.05, 0.1, 0.5, 3]) turns.observe(seconds, 'completed');
    const writes = new HistogramSeries({ name: 'x_write_seconds', help: 'Writes', labelNames: [], buckets: [0.001] });
    const text = `${[requests, turns, writes].map((s) => s.text()).join('\n\n')}\n`;

    expect(text).toContain('x_turn_seconds_bucket{status="completed",le="0.1"} 2\n');
    expect(text).toContain('x_turn_seconds_bucket{status="completed",le="1"} 3\n');
    expect(text).toContain('x_turn_seconds_bucket{status="completed",le="+Inf"} 4\n');
    expect(text).toContain('x_turn_seconds_sum{status="completed"} 3.65\n');
    expect(text).toContain('x_requests_total{method="a\\"b\\\\c\\nd",status="404"} 1\n');
    const scrape = parseScrape(text);
    expect(scrape.family('x_requests_total')).toMatchObject({ type: 'COUNTER', help: 'Requests\nby "method"' });
    expect(scrape.value('x_requests_total', { method: 'SendMessage', status: '200' })).toBe(3);
    expect(scrape.count('x_turn_seconds', { status: 'completed' })).toBe(4);
    // A family with no series yet is still announced.
    expect(scrape.family('x_write_seconds').type).toBe('HISTOGRAM');
    expect(scrape.count('x_write_seconds')).toBe(0);
  });

  it('refuses a family of more than two labels', () => {
    expect(() => new CounterSeries({ name: 'x', help: 'x', labelNames: ['a', 'b', 'c'] })).toThrow(
      /at most two labels/,
    );
  });
});
