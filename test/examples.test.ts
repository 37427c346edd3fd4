import { main as customSpecialist } from '../examples/custom-specialist';
import { main as delegation } from '../examples/delegation';
import { main as federation } from '../examples/federation';
import { main as singleAgent } from '../examples/single-agent';

describe('the examples', () => {
  it('single agent: lango-agent runs the custom tool', async () => {
    expect(await singleAgent()).toMatch(/^lango-agent: Result of exec_roll:\n\{"rolled":[1-6]\}$/);
  });

  it('delegation: the orchestrator hands the shell request to the operator', async () => {
    const lines = await delegation();
    expect(lines.slice(0, 2)).toEqual(['lango-orchestrator → operator', 'exec_shell: ok']);
    expect(lines[2]).toMatch(/^operator: .*"stdout":"delegated\\n"/);
  });

  it('federation: the hub tree holds the remote peer, which answers a delegated request', async () => {
    const [tree, answer] = await federation();
    expect(tree).toMatch(/, weather \(remote\)$/);
    expect(answer).toMatch(/^weather: /);
  });

  it('custom specialist: both tools land with the translator, which runs the one the message names', async () => {
    expect(await customSpecialist()).toEqual([
      'translator tools: translate_upper, reverse_text',
      'translator: Result of reverse_text:\nognal',
    ]);
  });
});
