import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { resolveConfig } from '../../src/config/load';
import { LangoConfig } from '../../src/config/schema';
import { durationMs, MAX_TIMER_MS } from '../../src/duration';
import { ConfigError } from '../../src/errors';

type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  maximum?: number;
  maxDuration?: string;
};

/** A key that is a length of time, and its maximum as the schema holds it. */
interface DurationKey {
  key: string;
  /** `10m` for a duration written in the grammar, `60000` for milliseconds (or seconds). */
  maximum: string | undefined;
}

/**
 * Every key of the schema that is a length of time: a duration in the one
 * grammar (marked with its `maxDuration`), or a number whose name says its
 * unit (`…Ms`, `…Seconds`). List items' fields as `list[].field`.
 */
function durationKeys(schema: JsonSchema, prefix = ''): DurationKey[] {
  const object = schema.anyOf?.find((s) => s.type === 'object') ?? schema;
  if (object.type === 'object' && object.properties) {
    return Object.entries(object.properties).flatMap(([key, child]) =>
      durationKeys(child, prefix ? `${prefix}.${key}` : key),
    );
  }
  const list = schema.anyOf?.find((s) => s.type === 'array') ?? schema;
  if (list.type === 'array' && list.items) return durationKeys(list.items, `${prefix}[]`);
  if (schema.maxDuration !== undefined) return [{ key: prefix, maximum: schema.maxDuration }];
  if (/(Ms|Seconds)$/.test(prefix)) return [{ key: prefix, maximum: schema.maximum?.toString() }];
  return [];
}

/** A config object with `value` at the dotted `key` (a list item's field in a list of one otherwise valid item). */
function configWith(key: string, value: unknown): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let at = root;
  const parts = key.split('.');
  parts.forEach((part, index) => {
    const last = index === parts.length - 1;
    if (part.endsWith('[]')) {
      const item: Record<string, unknown> = { name: 'peer', baseUrl: 'http://127.0.0.1:4101' };
      at[part.slice(0, -2)] = [item];
      at = item;
    } else if (last) {
      at[part] = value;
    } else {
      const child: Record<string, unknown> =
        part === 'oidc' ? { issuer: 'https://issuer.example', audience: 'lango' } : {};
      at[part] = child;
      at = child;
    }
  });
  return root;
}

/** The problem lines resolving `input` gives (none when it resolves). */
function problemsOf(input: unknown): string[] {
  try {
    resolveConfig(input);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.issues;
  }
}

/** The value just past a maximum, in the key's own form. */
function pastMaximum(maximum: string): string | number {
  const ms = durationMs(maximum);
  return /^\d+$/.test(maximum) ? Number(maximum) + 1 : `${ms! + 1}ms`;
}

describe('durations in the configuration (issue 37)', () => {
  const keys = durationKeys(z.toJSONSchema(LangoConfig, { io: 'input', unrepresentable: 'any' }) as JsonSchema);
  const documented = new Map(
    fs
      .readFileSync(path.join(__dirname, '../../docs/configuration.md'), 'utf8')
      .split('## Durations and their maxima')[1]!
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|').map((cell) => /`([^`]+)`/.exec(cell)?.[1]))
      .map(([, key, , maximum]) => [key!, maximum] as const),
  );

  it('finds the duration keys (the test would pass on none)', () => {
    expect(keys.map((k) => k.key)).toEqual(
      expect.arrayContaining(['a2a.longPollTimeout', 'cluster.lease', 'a2a.remoteAgents[].timeoutMs']),
    );
  });

  it('gives every duration key a maximum, documented as the schema holds it', () => {
    expect(keys.filter((k) => k.maximum === undefined)).toEqual([]);
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(keys.map((k) => [k.key, k.maximum])));
  });

  it('keeps each maximum a timer waits for within what a Node timer keeps', () => {
    for (const { key, maximum } of keys) {
      // The retention and the idempotency window are cutoffs compared with timestamps, never a timer's delay.
      if (key === 'a2a.taskRetention' || key === 'a2a.idempotencyWindow') continue;
      const ms = /Seconds$/.test(key) ? Number(maximum) * 1000 : (durationMs(maximum!) ?? Number(maximum));
      expect({ key, ms: Math.min(ms, MAX_TIMER_MS) }).toEqual({ key, ms });
    }
  });

  it.each(['a2a.longPollTimeout', 'a2a.peerLimits.maxDurationMs'])('takes %s at its maximum', (key) => {
    const { maximum } = keys.find((k) => k.key === key)!;
    expect(problemsOf(configWith(key, /^\d+$/.test(maximum!) ? Number(maximum) : maximum))).toEqual([]);
  });

  it('refuses every duration key past its maximum, naming the key and the maximum', () => {
    for (const { key, maximum } of keys) {
      const problems = problemsOf(configWith(key, pastMaximum(maximum!)));
      const where = key.replace('[]', '[0]');
      expect({ key, problems }).toEqual({ key, problems: [expect.stringContaining(`${where}: at most ${maximum}`)] });
    }
  });

  it('refuses a2a.longPollTimeout: 30d, which a timer would turn into an answer after 1 ms', () => {
    expect(problemsOf({ a2a: { longPollTimeout: '30d' } })).toEqual(['a2a.longPollTimeout: at most 10m (got "30d")']);
    expect(problemsOf({ a2a: { longPollTimeout: 'soon' } })).toEqual([
      'a2a.longPollTimeout: a duration such as 500ms, 30s, 5m, 2h or 1d (got "soon")',
    ]);
  });
});
