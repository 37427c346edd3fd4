/**
 * Extending a node: a specialist of your own (one spec object, a row added to
 * the table of seven) and tools of your own, given to `createApp`. One tool
 * names its specialist with `agent`; the other is routed by its name's
 * prefix. `npm run examples` runs it.
 */
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { z } from 'zod';
import { createApp, defineTool, OWNER, resolveConfig, runToEnd, silentLogger, type SpecRow } from 'lango';

/** The translator: its `translate_` prefix and its keywords route requests to it. */
export const translator: SpecRow = {
  name: 'translator',
  description: 'Translates and transforms text',
  prefixes: { translate_: 'text translation' },
  matchPriority: 8,
  keywords: ['translate', 'translation', 'reverse', 'language'],
  accepts: 'Text to translate or transform, and how',
  returns: 'The transformed text',
  cannotDo: ['run commands', 'browse the web'],
  alwaysInclude: false,
  instruction: {
    role: 'You are the translator: you transform text.',
    whatYouDo: ['Translate text between languages.', 'Reverse or re-case text.'],
    input: 'The text and the transformation wanted.',
    output: 'The transformed text only.',
    constraints: ['Keep the meaning of the text.'],
    handles: 'text translation and transformation',
  },
};

/** `translate_upper` lands with the translator by prefix; `reverse_text` by its `agent` field. */
export const translatorTools = [
  defineTool({
    name: 'translate_upper',
    description: 'Writes the text in capitals.',
    parameters: z.object({ text: z.string().describe('the text to write in capitals') }),
    execute: async ({ text }) => text.toUpperCase(),
  }),
  defineTool({
    name: 'reverse_text',
    agent: 'translator',
    description: 'Reverses the text, character by character.',
    parameters: z.object({ text: z.string().describe('the text to reverse') }),
    execute: async ({ text }) => [...text].reverse().join(''),
  }),
];

export async function main(dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-example-'))): Promise<string[]> {
  const app = await createApp(resolveConfig({ dataDir, tools: { browser: { enabled: false } } }), {
    logger: silentLogger,
    tools: translatorTools,
    specialists: [translator],
  });
  try {
    const owners = app.tools().flatMap(({ tool, owner }) => (owner === 'translator' ? [tool.name] : []));
    const result = await runToEnd(app.runner, {
      principal: OWNER,
      sessionId: 'example',
      text: 'reverse_text {"text": "lango"}',
    });
    return [`translator tools: ${owners.join(', ')}`, `${result.author}: ${result.text}`];
  } finally {
    await app.close();
  }
}

if (require.main === module) void main().then((lines) => process.stdout.write(lines.join('\n') + '\n'));
