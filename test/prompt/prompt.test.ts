import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../src/errors';
import { createMemoryLogger } from '../../src/log/logger';
import { SecretRegistry } from '../../src/log/redact';
import { buildAgentTree } from '../../src/orchestration/tree';
import { agentSpecs } from '../../src/orchestration/specs';
import {
  DEFAULT_CONVERSATION_RULES,
  DEFAULT_IDENTITY,
  DEFAULT_SAFETY,
  DEFAULT_TOOL_USAGE,
  ORCHESTRATOR_IDENTITY,
  assemblePrompt,
  buildOrchestratorSystemPrompt,
  buildSystemPrompt,
  createSubAgentPrompt,
  loadPromptSections,
} from '../../src/prompt';
import { orchestrationTools } from '../support/orchestrationTools';

const dirs: string[] = [];
function promptsDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-prompts-'));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const logger = () => createMemoryLogger();
const operatorInstruction = agentSpecs[0].instruction;

describe('loadPromptSections', () => {
  it('uses the four built-in sections in priority order when no promptsDir is given', () => {
    const sections = loadPromptSections({ logger: logger() });
    expect(sections.map((s) => [s.id, s.priority])).toEqual([
      ['identity', 100],
      ['safety', 200],
      ['conversationRules', 300],
      ['toolUsage', 400],
    ]);
    expect(sections.every((s) => s.source === 'built-in')).toBe(true);
  });

  it('replaces a built-in section with its file from promptsDir and keeps the others', () => {
    const dir = promptsDir({ 'SAFETY.md': 'CUSTOM SAFETY RULES' });
    const prompt = buildSystemPrompt(loadPromptSections({ promptsDir: dir, logger: logger() }));
    expect(prompt).toContain('CUSTOM SAFETY RULES');
    expect(prompt).not.toContain(DEFAULT_SAFETY);
    expect(prompt).toContain(DEFAULT_IDENTITY);
    expect(prompt).toContain(DEFAULT_TOOL_USAGE);
  });

  it('loads all four files from promptsDir and orders them by priority, not by file name', () => {
    const dir = promptsDir({
      'TOOL_USAGE.md': 'FOURTH',
      'AGENTS.md': 'FIRST',
      'CONVERSATION_RULES.md': 'THIRD',
      'SAFETY.md': 'SECOND',
    });
    expect(buildSystemPrompt(loadPromptSections({ promptsDir: dir, logger: logger() }))).toBe(
      'FIRST\n\nSECOND\n\nTHIRD\n\nFOURTH',
    );
  });

  it('adds any other .md file as a titled custom section after the built-in ones', () => {
    const dir = promptsDir({
      'STYLE_GUIDE.md': 'Always answer formally.',
      'notes.txt': 'ignored',
    });
    const sections = loadPromptSections({ promptsDir: dir, logger: logger() });
    const custom = sections.find((s) => s.id === 'custom:style_guide');
    expect(custom?.priority).toBeGreaterThanOrEqual(900);
    const prompt = buildSystemPrompt(sections);
    expect(prompt.endsWith('## STYLE GUIDE\nAlways answer formally.')).toBe(true);
    expect(prompt).not.toContain('ignored');
  });

  it('fails with a ConfigError naming a prompts directory that does not exist', () => {
    const missing = path.join(os.tmpdir(), 'lango-no-such-prompts-dir');
    expect(() => loadPromptSections({ promptsDir: missing, logger: logger() })).toThrow(ConfigError);
    expect(() => loadPromptSections({ promptsDir: missing, logger: logger() })).toThrow(missing);
  });

  it('fails with a clear error naming an unreadable prompt file', () => {
    const dir = promptsDir({});
    fs.mkdirSync(path.join(dir, 'SAFETY.md')); // a directory where a file should be: unreadable as text
    const load = () => loadPromptSections({ promptsDir: dir, logger: logger() });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(`cannot read prompt file ${path.join(dir, 'SAFETY.md')}`);
  });

  it('leaves out a section whose file is empty and warns about it', () => {
    const dir = promptsDir({ 'TOOL_USAGE.md': '   \n' });
    const log = logger();
    const prompt = buildSystemPrompt(loadPromptSections({ promptsDir: dir, logger: log }));
    expect(prompt).not.toContain(DEFAULT_TOOL_USAGE);
    expect(log.records.some((r) => r.level === 'warn' && r.message.includes('empty'))).toBe(true);
  });

  it('masks a known secret value found in a prompt file', () => {
    const secrets = new SecretRegistry();
    secrets.add('sk-live-abcdef123456');
    const dir = promptsDir({
      'AGENTS.md': 'You are Lango. Key: sk-live-abcdef123456',
    });
    const log = logger();
    const prompt = buildSystemPrompt(loadPromptSections({ promptsDir: dir, logger: log, secrets }));
    expect(prompt).not.toContain('sk-live-abcdef123456');
    expect(log.records.some((r) => r.level === 'warn')).toBe(true);
  });
});

it('fails with a clear error naming a prompt file that is a dangling link', () => {
  const dir = promptsDir({});
  fs.symlinkSync(path.join(dir, 'gone.md'), path.join(dir, 'AGENTS.md'));
  expect(() => loadPromptSections({ promptsDir: dir, logger: logger() })).toThrow(
    `cannot read prompt file ${path.join(dir, 'AGENTS.md')}: ENOENT`,
  );
});

describe('assemblePrompt', () => {
  it('sorts by priority, keeps insertion order for ties and skips empty sections', () => {
    expect(
      assemblePrompt([
        { id: 'safety', priority: 200, content: 'B', source: 'x' },
        { id: 'custom:a', priority: 900, content: 'D', source: 'x' },
        { id: 'custom:b', priority: 900, content: 'E', source: 'x' },
        { id: 'toolUsage', priority: 400, content: '  ', source: 'x' },
        { id: 'identity', priority: 100, content: 'A', source: 'x' },
      ]),
    ).toBe('A\n\nB\n\nD\n\nE');
  });
});

// multi-agent-orchestration.md: "Orchestrator system prompt isolation".
describe('orchestrator prompt isolation', () => {
  it('replaces the identity with a delegation-focused identity and removes tool usage in multi-agent mode', () => {
    const prompt = buildOrchestratorSystemPrompt(loadPromptSections({ logger: logger() }));
    expect(prompt).toContain(ORCHESTRATOR_IDENTITY);
    expect(prompt).not.toContain(DEFAULT_IDENTITY);
    expect(prompt).not.toContain(DEFAULT_TOOL_USAGE);
    expect(prompt).toContain(DEFAULT_SAFETY);
    expect(prompt).toContain(DEFAULT_CONVERSATION_RULES);
    for (const word of ['Exec', 'Browser', 'Crypto']) expect(prompt).not.toMatch(new RegExp(`\\b${word}\\b`, 'i'));
  });

  it('isolates the orchestrator from a custom AGENTS.md and TOOL_USAGE.md too', () => {
    const dir = promptsDir({
      'AGENTS.md': 'Use the Exec tool.',
      'TOOL_USAGE.md': 'Browser tips.',
    });
    const prompt = buildOrchestratorSystemPrompt(loadPromptSections({ promptsDir: dir, logger: logger() }));
    expect(prompt).not.toContain('Use the Exec tool.');
    expect(prompt).not.toContain('Browser tips.');
  });

  it('keeps every section, identity and tool usage included, in the single-agent prompt', () => {
    const prompt = buildSystemPrompt(loadPromptSections({ logger: logger() }));
    for (const section of [DEFAULT_IDENTITY, DEFAULT_SAFETY, DEFAULT_CONVERSATION_RULES, DEFAULT_TOOL_USAGE]) {
      expect(prompt).toContain(section);
    }
  });

  it('puts the isolated prompt at the head of the orchestrator instruction and the full one in the single agent', () => {
    const sections = loadPromptSections({ logger: logger() });
    const tools = orchestrationTools('exec_shell', 'browser_open', 'crypto_hash');
    const orchestrator = buildAgentTree({
      tools,
      systemPrompt: buildOrchestratorSystemPrompt(sections),
    });
    expect(orchestrator.instruction.startsWith(ORCHESTRATOR_IDENTITY)).toBe(true);
    expect(orchestrator.instruction).not.toMatch(/\b(exec|browser|crypto)\b/i);
    const single = buildAgentTree({
      tools,
      multiAgent: false,
      systemPrompt: buildSystemPrompt(sections),
    });
    expect(single.instruction).toContain(DEFAULT_IDENTITY);
    expect(single.instruction).toContain(DEFAULT_TOOL_USAGE);
  });
});

describe('createSubAgentPrompt', () => {
  it('builds a specialist prompt from its default instruction and the shared safety and conversation rules', () => {
    const prompt = createSubAgentPrompt({
      sections: loadPromptSections({ logger: logger() }),
    })('operator', operatorInstruction);
    expect(prompt.startsWith(operatorInstruction)).toBe(true);
    expect(prompt).toContain(DEFAULT_SAFETY);
    expect(prompt).toContain(DEFAULT_CONVERSATION_RULES);
    expect(prompt).not.toContain(DEFAULT_IDENTITY);
    expect(prompt).not.toContain(DEFAULT_TOOL_USAGE);
  });

  it('applies per-agent overrides from agents/<name>/ to that agent only', () => {
    const dir = promptsDir({
      'SAFETY.md': 'SHARED SAFETY',
      'agents/operator/IDENTITY.md': 'OPERATOR IDENTITY OVERRIDE',
      'agents/operator/SAFETY.md': 'OPERATOR SAFETY',
      'agents/operator/SHELL_RULES.md': 'Prefer POSIX sh.',
      'agents/planner/CONVERSATION_RULES.md': 'PLANNER RULES',
    });
    const sections = loadPromptSections({ promptsDir: dir, logger: logger() });
    const prompt = createSubAgentPrompt({
      sections,
      promptsDir: dir,
      logger: logger(),
    });
    const operator = prompt('operator', operatorInstruction);
    expect(operator).toContain('OPERATOR IDENTITY OVERRIDE');
    expect(operator).not.toContain(operatorInstruction);
    expect(operator).toContain('OPERATOR SAFETY');
    expect(operator).not.toContain('SHARED SAFETY');
    expect(operator).toContain('## SHELL RULES\nPrefer POSIX sh.');
    expect(operator).toContain(DEFAULT_CONVERSATION_RULES);

    const planner = prompt('planner', 'PLANNER DEFAULT');
    expect(planner).toContain('PLANNER DEFAULT');
    expect(planner).toContain('SHARED SAFETY');
    expect(planner).toContain('PLANNER RULES');
    expect(planner).not.toContain(DEFAULT_CONVERSATION_RULES);
    expect(planner).not.toContain('OPERATOR');
  });

  it('reads override files once, when the function is created', () => {
    const dir = promptsDir({ 'agents/vault/IDENTITY.md': 'VAULT V1' });
    const prompt = createSubAgentPrompt({
      sections: loadPromptSections({ logger: logger() }),
      promptsDir: dir,
    });
    fs.writeFileSync(path.join(dir, 'agents/vault/IDENTITY.md'), 'VAULT V2');
    expect(prompt('vault', 'default')).toContain('VAULT V1');
  });

  it('warns about an override folder for an unknown specialist', () => {
    const dir = promptsDir({ 'agents/operater/IDENTITY.md': 'typo' });
    const log = logger();
    const prompt = createSubAgentPrompt({
      sections: loadPromptSections({ logger: log }),
      promptsDir: dir,
      logger: log,
    });
    expect(prompt('operator', 'default')).not.toContain('typo');
    expect(log.records.some((r) => r.level === 'warn' && String(r.meta.dir).endsWith('operater'))).toBe(true);
  });

  it('fails with a clear error naming an unreadable per-agent file', () => {
    const dir = promptsDir({});
    fs.mkdirSync(path.join(dir, 'agents/librarian/SAFETY.md'), {
      recursive: true,
    });
    expect(() =>
      createSubAgentPrompt({
        sections: loadPromptSections({ logger: logger() }),
        promptsDir: dir,
      }),
    ).toThrow(`cannot read prompt file ${path.join(dir, 'agents/librarian/SAFETY.md')}`);
  });

  it('feeds buildAgentTree so every specialist gets its own assembled prompt', () => {
    const dir = promptsDir({
      'agents/navigator/IDENTITY.md': 'NAVIGATOR FROM FILE',
    });
    const subAgentPrompt = createSubAgentPrompt({
      sections: loadPromptSections({ logger: logger() }),
      promptsDir: dir,
    });
    const root = buildAgentTree({
      tools: orchestrationTools('exec_shell', 'browser_open'),
      subAgentPrompt,
    });
    const byName = Object.fromEntries(root.subAgents.map((a) => [a.name, a.kind === 'llm' ? a.instruction : '']));
    expect(byName.navigator).toContain('NAVIGATOR FROM FILE');
    expect(byName.operator).toContain(operatorInstruction);
    expect(byName.operator).toContain(DEFAULT_SAFETY);
    expect(byName.planner).toContain('[REJECT]');
  });
});
