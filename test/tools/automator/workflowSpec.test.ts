import { parseWorkflow, renderPrompt } from '../../../src/tools/automator/workflowSpec';

const agents = ['lango-orchestrator', 'operator', 'navigator', 'vault', 'librarian'];

describe('parseWorkflow', () => {
  it('accepts a DAG whose later steps quote earlier ones', () => {
    const workflow = parseWorkflow(
      [
        'name: digest',
        'steps:',
        '  - id: fetch',
        '    agent: navigator',
        '    prompt: fetch the news',
        '  - id: digest',
        '    agent: librarian',
        '    prompt: "summarise {{steps.fetch.result}}"',
        '    depends_on: [fetch]',
        '    timeout: 30s',
      ].join('\n'),
      agents,
    );
    expect(workflow.steps.map((step) => [step.id, step.depends_on])).toEqual([
      ['fetch', []],
      ['digest', ['fetch']],
    ]);
  });

  it('reports a YAML syntax error with its line', () => {
    expect(() => parseWorkflow('name: x\nsteps: [\n  - id: a', agents)).toThrow(
      /^invalid workflow YAML: .*at line 3, column 3$/,
    );
  });

  it('names an unknown depends_on ref with its location', () => {
    const yaml = 'name: x\nsteps:\n  - id: a\n    prompt: p\n    depends_on: [ghost]\n';
    expect(() => parseWorkflow(yaml, agents)).toThrow(
      'steps[0].depends_on[0]: step "a" depends on unknown step "ghost"',
    );
  });

  it('names a duplicate step id', () => {
    const yaml = 'name: x\nsteps:\n  - id: a\n    prompt: p\n  - id: a\n    prompt: q\n';
    expect(() => parseWorkflow(yaml, agents)).toThrow('steps[1].id: duplicate step id "a"');
  });

  it('shows the cycle it found', () => {
    const yaml = [
      'name: x',
      'steps:',
      '  - { id: a, prompt: p, depends_on: [c] }',
      '  - { id: b, prompt: p, depends_on: [a] }',
      '  - { id: c, prompt: p, depends_on: [b] }',
    ].join('\n');
    expect(() => parseWorkflow(yaml, agents)).toThrow('steps: steps form a cycle: a → c → b → a');
  });

  it('refuses a prompt that quotes a step it does not depend on', () => {
    const yaml = 'name: x\nsteps:\n  - { id: a, prompt: p }\n  - { id: b, prompt: "use {{steps.a.result}}" }\n';
    expect(() => parseWorkflow(yaml, agents)).toThrow('step "b" quotes steps.a.result but does not depend on "a"');
  });

  it('names an agent that is not in the tree, listing the known ones', () => {
    const yaml = 'name: x\nsteps:\n  - { id: a, agent: wizard, prompt: p }\n';
    expect(() => parseWorkflow(yaml, agents)).toThrow(
      /step "a" names agent "wizard", which is not in the agent tree \(known: .*navigator/,
    );
  });

  it('lists every shape problem (a missing prompt, an unknown key) in one message', () => {
    const yaml = 'name: x\nsteps:\n  - { id: a, prompt: p }\n  - { id: b, retries: 3 }\n';
    let message = '';
    try {
      parseWorkflow(yaml, agents);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^invalid workflow: steps\[1\]\.prompt: .*expected string/);
    expect(message).toMatch(/steps\[1\]: .*retries/);
  });

  it('refuses a bad timeout', () => {
    const yaml = 'name: x\nsteps:\n  - { id: a, prompt: p, timeout: soon }\n';
    expect(() => parseWorkflow(yaml, agents)).toThrow('steps[0].timeout: invalid timeout of step "a" "soon"');
  });

  it('refuses a timeout over a day, past which no step is waited for', () => {
    const yaml = 'name: x\nsteps:\n  - { id: a, prompt: p, timeout: 30d }\n';
    expect(() => parseWorkflow(yaml, agents)).toThrow(
      'steps[0].timeout: invalid timeout of step "a" "30d": at most 1d',
    );
  });

  it('refuses a document that is not a workflow', () => {
    expect(() => parseWorkflow('just text', agents)).toThrow(/^invalid workflow: workflow: /);
  });
});

describe('renderPrompt', () => {
  it('replaces each quote with the step result', () => {
    expect(
      renderPrompt(
        'A={{steps.a.result}} B={{ steps.b.result }}',
        new Map([
          ['a', '1'],
          ['b', '2'],
        ]),
      ),
    ).toBe('A=1 B=2');
  });
});
