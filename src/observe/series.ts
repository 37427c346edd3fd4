/**
 * Counters and histograms the node keeps itself and prints in the
 * Prometheus text format when scraped. prom-client builds and hashes a label
 * object on every observation (its keys checked, sorted, joined); these find
 * a series by its label values in nested maps, so once a series exists
 * counting a request or timing a turn allocates nothing. Up to two labels;
 * prom-client keeps the process metrics and the gauges computed at scrape.
 */

/** What a series family is called and what its labels are. */
export interface SeriesSpec {
  name: string;
  help: string;
  /** At most two. */
  labelNames: readonly string[];
}

/** Label values by their names, in the family's label order. */
type Labels = ReadonlyArray<readonly [string, string]>;

/** Series of one family found by their (up to two) label values. */
class SeriesTable<S> {
  private readonly byFirst = new Map<string, Map<string, S>>();
  readonly all: Array<{ labels: Labels; series: S }> = [];

  constructor(
    private readonly labelNames: readonly string[],
    private readonly make: () => S,
  ) {
    if (labelNames.length > 2) throw new Error('a series family has at most two labels');
  }

  at(first: string, second: string): S {
    let inner = this.byFirst.get(first);
    if (!inner) this.byFirst.set(first, (inner = new Map()));
    let series = inner.get(second);
    if (!series) {
      series = this.make();
      inner.set(second, series);
      const values = [first, second];
      this.all.push({ labels: this.labelNames.map((name, i) => [name, values[i]!] as const), series });
    }
    return series;
  }
}

/** A counter family: `lango_a2a_requests_total{method="SendMessage",status="200"} 2`. */
export class CounterSeries {
  private readonly table: SeriesTable<{ value: number }>;

  constructor(private readonly spec: SeriesSpec) {
    this.table = new SeriesTable(spec.labelNames, () => ({ value: 0 }));
  }

  /** Adds `by` to the series of these label values (in the family's label order). */
  inc(by: number, first = '', second = ''): void {
    this.table.at(first, second).value += by;
  }

  text(): string {
    const lines = header(this.spec, 'counter');
    for (const { labels, series } of this.table.all)
      lines.push(`${this.spec.name}${labelText(labels)} ${series.value}`);
    return lines.join('\n');
  }
}

/** A histogram family: cumulative `_bucket` lines by `le`, then `_sum` and `_count`, per series. */
export class HistogramSeries {
  private readonly table: SeriesTable<{ counts: number[]; sum: number; count: number }>;

  constructor(private readonly spec: SeriesSpec & { buckets: readonly number[] }) {
    // One count per bucket, and one past the last (what only `+Inf` holds).
    this.table = new SeriesTable(spec.labelNames, () => ({
      counts: new Array<number>(spec.buckets.length + 1).fill(0),
      sum: 0,
      count: 0,
    }));
  }

  /** Records `value` in the series of these label values (in the family's label order). */
  observe(value: number, first = '', second = ''): void {
    const series = this.table.at(first, second);
    const { buckets } = this.spec;
    let bucket = 0;
    while (bucket < buckets.length && value > buckets[bucket]!) bucket++;
    series.counts[bucket]! += 1;
    series.sum += value;
    series.count += 1;
  }

  text(): string {
    const { name, buckets } = this.spec;
    const lines = header(this.spec, 'histogram');
    for (const { labels, series } of this.table.all) {
      let cumulative = 0;
      for (let i = 0; i <= buckets.length; i++) {
        cumulative += series.counts[i]!;
        const le = i < buckets.length ? String(buckets[i]) : '+Inf';
        lines.push(`${name}_bucket${labelText([...labels, ['le', le]])} ${cumulative}`);
      }
      lines.push(`${name}_sum${labelText(labels)} ${series.sum}`);
      lines.push(`${name}_count${labelText(labels)} ${series.count}`);
    }
    return lines.join('\n');
  }
}

function header(spec: SeriesSpec, type: 'counter' | 'histogram'): string[] {
  return [
    `# HELP ${spec.name} ${spec.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`,
    `# TYPE ${spec.name} ${type}`,
  ];
}

function labelText(labels: Labels): string {
  if (labels.length === 0) return '';
  const pairs = labels.map(
    ([name, value]) => `${name}="${value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`,
  );
  return `{${pairs.join(',')}}`;
}
