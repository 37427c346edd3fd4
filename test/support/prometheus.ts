// parse-prometheus-text-format ships no types: its output is prom2json's shape.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const parsePrometheusTextFormat = require('parse-prometheus-text-format') as (text: string) => PromFamily[];

/** One metric family as prom2json shapes it. */
export interface PromFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Array<{
    labels?: Record<string, string>;
    value?: string;
    count?: string;
    sum?: string;
    buckets?: Record<string, string>;
  }>;
}

/** A scrape parsed by a Prometheus text-format parser, with lookups by name and labels. */
export function parseScrape(text: string) {
  const families = parsePrometheusTextFormat(text);
  const family = (name: string): PromFamily => {
    const found = families.find((f) => f.name === name);
    if (!found) throw new Error(`no metric family ${name} in the scrape`);
    return found;
  };
  const sample = (name: string, labels: Record<string, string> = {}) =>
    family(name).metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return {
    families,
    family,
    /** The value of a counter or gauge sample (0 when no sample has these labels). */
    value: (name: string, labels: Record<string, string> = {}) => Number(sample(name, labels)?.value ?? 0),
    /**
     * The observation count of a histogram series (0 when none). The parser
     * keeps only unlabelled histograms whole, so once it has accepted the
     * scrape the series' `_count` line is read directly.
     */
    count: (name: string, labels: Record<string, string> = {}) => {
      if (family(name).type !== 'HISTOGRAM') throw new Error(`${name} is not a histogram`);
      for (const line of text.split('\n')) {
        const match = /^(\w+)_count(?:\{(.*)\})? (\S+)$/.exec(line);
        if (!match || match[1] !== name) continue;
        const seen = Object.fromEntries(
          [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
        );
        if (Object.entries(labels).every(([k, v]) => seen[k] === v)) return Number(match[3]);
      }
      return 0;
    },
  };
}
