/**
 * The files `lango init` writes: a project that embeds a node with one
 * custom tool, ready for `npm install`, `npm test` and `npm start`. Each
 * file is shown as the person will read it, so it is written plainly here.
 */

/** What the template needs to know: the project's name, where lango is, the versions to pin. */
export interface ProjectTemplateOptions {
  name: string;
  /** The folder of the lango package that runs `init` (the project depends on it by path). */
  langoRoot: string;
  /** Versions from lango's own manifest, so the project builds with what lango was built with. */
  versions: Record<'zod' | 'typescript' | 'jest' | 'ts-jest' | '@types/jest' | '@types/node', string>;
}

/** The project's files by path (relative to its folder). */
export function projectFiles(options: ProjectTemplateOptions): Record<string, string> {
  const { versions } = options;
  const manifest = {
    name: options.name,
    version: '0.1.0',
    private: true,
    scripts: {
      build: 'tsc -p .',
      start: 'tsc -p . && node dist/src/main.js',
      test: 'jest',
    },
    dependencies: { lango: `file:${options.langoRoot}`, zod: versions.zod },
    devDependencies: {
      '@types/jest': versions['@types/jest'],
      '@types/node': versions['@types/node'],
      jest: versions.jest,
      'ts-jest': versions['ts-jest'],
      typescript: versions.typescript,
    },
  };
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'CommonJS',
      moduleResolution: 'Node10',
      strict: true,
      esModuleInterop: true,
      skipLibCheck: true,
      outDir: 'dist',
      rootDir: '.',
      types: ['node', 'jest'],
    },
    include: ['src/**/*.ts', 'test/**/*.ts'],
  };
  return {
    'package.json': JSON.stringify(manifest, null, 2) + '\n',
    'tsconfig.json': JSON.stringify(tsconfig, null, 2) + '\n',
    'jest.config.js': JEST_CONFIG,
    '.gitignore': 'node_modules/\ndist/\n.lango/\n',
    'lango.config.yaml': CONFIG,
    'src/tools/wordCount.ts': TOOL,
    'src/main.ts': MAIN,
    'test/wordCount.test.ts': TEST,
  };
}

// lango's A2A library requires jose, which is ESM only: jest's CommonJS runtime needs it compiled (ts-jest, allowJs).
const JEST_CONFIG = `/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  transform: { '^.+\\.[tj]s$': ['ts-jest', { tsconfig: { allowJs: true, isolatedModules: true, esModuleInterop: true } }] },
  transformIgnorePatterns: ['/node_modules/(?!(jose)/)'],
};
`;

const CONFIG = `# The node's configuration; every key and its default is in lango's README ("Configuration").
server:
  host: 127.0.0.1
  port: 4000
# The data folder (SQLite, workspace, keys); LANGO_DATA_DIR or --data-dir override it.
dataDir: ./.lango
agent:
  # Without an API key the node runs the embedded offline model. For a real one:
  # provider: openai, apiKey: \${OPENAI_API_KEY}, and baseUrl for any OpenAI-compatible server.
  multiAgent: true
tools:
  browser:
    enabled: false
`;

const TOOL = `import { z } from 'zod';
import { defineTool } from 'lango';

/**
 * A custom tool: declared once, its arguments checked against \`parameters\`
 * before \`execute\` runs. It lands with the librarian (\`agent\`); ask the
 * node "word_count text=\\"the quick brown fox\\"" to run it.
 */
export const wordCount = defineTool({
  name: 'word_count',
  agent: 'librarian',
  description: 'Counts the words of a text.',
  parameters: z.object({ text: z.string().describe('the text to count the words of') }),
  execute: async ({ text }) => ({ words: text.split(/\\s+/).filter(Boolean).length }),
});
`;

const MAIN = `import { ConfigError, InputError, loadConfig, serveNode } from 'lango';
import { wordCount } from './tools/wordCount';

/**
 * The node: lango.config.yaml (or $LANGO_CONFIG), the node's own tools and
 * yours. It serves its data folder as \`lango serve\` does: it holds the
 * folder (\`npx lango chat\` in this folder talks to it) and writes the
 * owner token the CLI and the console sign in with (.lango/owner.token).
 */
async function main(): Promise<void> {
  const { config } = loadConfig();
  const node = await serveNode(config, { tools: [wordCount] });
  console.log(\`lango node listening at \${node.url} (console: \${node.url}/console)\`);
  const stop = () => {
    void node.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

// Bad configuration or a data folder another node holds: exit 2 with what to fix, as \`lango serve\` does.
main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  if (error instanceof ConfigError) for (const issue of error.issues) console.error(\`  \${issue}\`);
  process.exit(error instanceof ConfigError || error instanceof InputError ? 2 : 1);
});
`;

const TEST = `import { createMemoryLogger, OWNER, type ToolContext } from 'lango';
import { wordCount } from '../src/tools/wordCount';

const ctx: ToolContext = {
  signal: new AbortController().signal,
  logger: createMemoryLogger(),
  principal: OWNER,
  sessionId: 'test',
  agentName: 'librarian',
  approved: false,
};

describe('word_count', () => {
  it('counts the words of a text', async () => {
    const args = wordCount.parameters.parse({ text: 'the quick  brown fox' });
    expect(await wordCount.execute(args, ctx)).toEqual({ words: 4 });
  });

  it('refuses a call without text', () => {
    expect(wordCount.parameters.safeParse({}).success).toBe(false);
  });
});
`;
