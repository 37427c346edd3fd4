import { agentSpecs, findSpec } from '../../src/orchestration/specs';

// agent-routing.md: "AgentSpec registry defines sub-agent identity and routing metadata"
// (seven specs, not six: the automator was added by multi-agent-orchestration.md).
describe('agentSpecs registry', () => {
  const spec = (name: string) => {
    const found = findSpec(name);
    if (!found) throw new Error(`no spec ${name}`);
    return found;
  };

  it('defines every AgentSpec field with its type on every spec', () => {
    for (const s of agentSpecs) {
      expect(typeof s.name).toBe('string');
      expect(typeof s.description).toBe('string');
      expect(typeof s.instruction).toBe('string');
      expect(Array.isArray(s.prefixes)).toBe(true);
      expect(Array.isArray(s.keywords)).toBe(true);
      expect(typeof s.accepts).toBe('string');
      expect(typeof s.returns).toBe('string');
      expect(Array.isArray(s.cannotDo)).toBe(true);
      expect(typeof s.alwaysInclude).toBe('boolean');
    }
  });

  it('contains exactly seven specs in creation order', () => {
    expect(agentSpecs.map((s) => s.name)).toEqual([
      'operator',
      'navigator',
      'vault',
      'librarian',
      'automator',
      'planner',
      'chronicler',
    ]);
  });

  it('gives every spec a unique name', () => {
    const names = agentSpecs.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('gives every spec a non-empty keyword list', () => {
    for (const s of agentSpecs) expect(s.keywords.length).toBeGreaterThan(0);
  });

  it('gives every spec non-empty Accepts and Returns', () => {
    for (const s of agentSpecs) {
      expect(s.accepts.trim()).not.toBe('');
      expect(s.returns.trim()).not.toBe('');
    }
  });

  it.each([
    ['operator', ['run', 'execute', 'command', 'shell', 'file', 'read', 'write', 'edit', 'delete', 'skill']],
    ['navigator', ['browse', 'web', 'url', 'page', 'navigate', 'click', 'screenshot', 'website']],
    ['vault', ['encrypt', 'decrypt', 'sign', 'hash', 'secret', 'password', 'payment', 'wallet', 'USDC']],
    [
      'librarian',
      ['search', 'find', 'lookup', 'knowledge', 'learning', 'retrieve', 'graph', 'RAG', 'inquiry', 'question', 'gap'],
    ],
    [
      'automator',
      [
        'schedule',
        'cron',
        'every',
        'recurring',
        'background',
        'async',
        'later',
        'workflow',
        'pipeline',
        'automate',
        'timer',
      ],
    ],
    ['planner', ['plan', 'decompose', 'steps', 'strategy', 'how to', 'break down']],
    ['chronicler', ['remember', 'recall', 'observation', 'reflection', 'memory', 'history']],
  ])('includes the routing keywords of the %s', (name, keywords) => {
    expect(spec(name).keywords).toEqual(expect.arrayContaining(keywords));
  });

  it.each([
    ['operator', ['exec', 'fs_', 'skill_']],
    ['navigator', ['browser_']],
    ['vault', ['crypto_', 'secrets_', 'payment_']],
    [
      'librarian',
      ['search_', 'rag_', 'graph_', 'save_knowledge', 'save_learning', 'create_skill', 'list_skills', 'librarian_'],
    ],
    ['automator', ['cron_', 'bg_', 'workflow_']],
    ['planner', []],
    ['chronicler', ['memory_', 'observe_', 'reflect_']],
  ])('declares the tool prefixes of the %s', (name, prefixes) => {
    expect([...spec(name).prefixes]).toEqual(prefixes);
  });

  it('structures every instruction with What You Do, Input Format, Output Format and Constraints', () => {
    for (const s of agentSpecs) {
      for (const heading of ['## What You Do', '## Input Format', '## Output Format', '## Constraints']) {
        expect(s.instruction).toContain(heading);
      }
    }
  });

  it('puts the [REJECT] protocol in every sub-agent instruction', () => {
    for (const s of agentSpecs) {
      expect(s.instruction).toContain('[REJECT]');
      expect(s.instruction).toContain('[REJECT] This task requires <correct_agent>. I handle: ');
    }
  });

  it('guides the operator to provide results clearly', () => {
    expect(spec('operator').instruction).toMatch(/provide results clearly/i);
  });

  it('guides the librarian to organize results clearly', () => {
    expect(spec('librarian').instruction).toMatch(/organize results clearly/i);
  });

  it('gives the librarian a Proactive Behavior section about weaving pending inquiries into responses', () => {
    const instruction = spec('librarian').instruction;
    expect(instruction).toContain('## Proactive Behavior');
    const section = instruction.slice(instruction.indexOf('## Proactive Behavior'));
    expect(section).toMatch(/pending inquiries/);
    expect(section).toMatch(/weave .*naturally into your response/);
  });

  it('guides the planner to present the plan for review', () => {
    expect(spec('planner').instruction).toMatch(/present the plan for review/i);
  });

  it('guides the chronicler to report what was stored or retrieved', () => {
    expect(spec('chronicler').instruction).toMatch(/report what was stored or retrieved/i);
  });

  it('always includes the planner and only the planner', () => {
    expect(agentSpecs.filter((s) => s.alwaysInclude).map((s) => s.name)).toEqual(['planner']);
  });

  it('is frozen so callers cannot change routing by accident', () => {
    expect(Object.isFrozen(agentSpecs)).toBe(true);
    expect(Object.isFrozen(agentSpecs[0])).toBe(true);
    expect(Object.isFrozen(agentSpecs[0].keywords)).toBe(true);
  });
});
