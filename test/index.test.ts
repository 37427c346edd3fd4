import path from 'node:path';
import { z } from 'zod';
import * as lango from '../src';

/** Names the issue promises to tests outside the repository. */
const PROMISED = [
  'defineTool',
  'agentSpecs',
  'partitionTools',
  'toolCapability',
  'capabilityDescription',
  'buildAgentTree',
  'buildOrchestratorInstruction',
  'loadRemoteAgents',
  'createApp',
  'loadConfig',
];

describe('the package entry point', () => {
  it('exports the promised names from the source and from the built package main', () => {
    for (const name of PROMISED) expect(typeof (lango as Record<string, unknown>)[name]).not.toBe('undefined');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pkg = require('../package.json') as { main: string };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const built = require(path.resolve(__dirname, '..', pkg.main)) as Record<string, unknown>;
    for (const name of PROMISED) expect(typeof built[name]).toBe(typeof (lango as Record<string, unknown>)[name]);
  });

  it('builds an inspectable tree from tools alone, with the shapes the issue names', () => {
    const tools = ['exec_shell', 'fs_read', 'browser_navigate', 'save_knowledge_note', 'weather_now'].map((name) =>
      lango.defineTool({ name, description: name, parameters: z.object({}), execute: async () => 'ok' }),
    );
    const set = lango.partitionTools(tools);
    expect(Object.keys(set).sort()).toEqual(
      ['automator', 'chronicler', 'librarian', 'navigator', 'operator', 'planner', 'unmatched', 'vault'].sort(),
    );
    expect(set.unmatched.map((t) => t.name)).toEqual(['weather_now']);
    expect(lango.agentSpecs.map((s) => s.name)).toEqual([
      'operator',
      'navigator',
      'vault',
      'librarian',
      'automator',
      'planner',
      'chronicler',
    ]);
    expect(lango.toolCapability('browser_navigate')).toBe('web browsing');
    expect(lango.toolCapability('weather_now')).toBe('');

    const root = lango.buildAgentTree({ tools });
    expect(root.name).toBe('lango-orchestrator');
    expect(root.tools).toEqual([]);
    expect(root.subAgents.map((a) => a.name)).toEqual(['operator', 'navigator', 'librarian', 'planner']);
    for (const agent of root.subAgents) {
      expect(agent).toEqual(
        expect.objectContaining({
          name: expect.any(String),
          description: expect.any(String),
          instruction: expect.any(String),
        }),
      );
    }
    expect(root.instruction).toContain('Unmatched Tools');
  });
});
