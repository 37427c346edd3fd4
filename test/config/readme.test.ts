import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { LangoConfig } from '../../src/config/schema';

type JsonSchema = { type?: string; properties?: Record<string, JsonSchema>; items?: JsonSchema; anyOf?: JsonSchema[] };

/** Every leaf key path of the schema; list items as `name[]`, whose fields the README describes in prose. */
function leafPaths(schema: JsonSchema, prefix = ''): string[] {
  const object = schema.anyOf?.find((s) => s.type === 'object') ?? schema;
  if (object.type === 'object' && object.properties && Object.keys(object.properties).length) {
    return Object.entries(object.properties).flatMap(([key, child]) =>
      leafPaths(child, prefix ? `${prefix}.${key}` : key),
    );
  }
  if (schema.type === 'array' && schema.items?.properties) return [`${prefix}[]`];
  return [prefix];
}

describe('the configuration reference (docs/configuration.md)', () => {
  const section = fs.readFileSync(path.join(__dirname, '../../docs/configuration.md'), 'utf8');
  const documented = new Set(
    section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...line.split('|')[1].matchAll(/`([^`]+)`/g)].map((m) => m[1])),
  );
  const keys = leafPaths(z.toJSONSchema(LangoConfig, { io: 'input', unrepresentable: 'any' }) as JsonSchema);

  it('documents every key of the schema', () => {
    expect(keys.filter((key) => !documented.has(key))).toEqual([]);
  });

  it('documents no key the schema does not have', () => {
    // A list item's field (`a2a.remoteAgents[].timeoutMs`) is the schema's when its list is.
    const known = (key: string) =>
      keys.includes(key) || (key.includes('[].') && keys.includes(key.slice(0, key.indexOf('[]') + 2)));
    expect([...documented].filter((key) => !known(key))).toEqual([]);
  });
});
