import { agentGraph, toDot, toMermaid, toSvg } from '../../src/observe/graph';
import type { PeerStatus } from '../../src/federation/health';
import { a2aTestTree } from '../support/a2aServer';

/** The family table's names of the test tools (a real node asks its toolset). */
const FAMILIES: Record<string, string> = { exec_shell: 'exec', fs_read: 'fs', secrets_get: 'secrets' };

/** The real tree builder (test tools, one remote peer) and a second configured peer that was skipped. */
function graph(familyOf: (tool: string) => string | undefined = (tool) => FAMILIES[tool]) {
  const peers: PeerStatus[] = [
    { name: 'peer', cardUrl: 'http://127.0.0.1:9/peer/.well-known/agent-card.json', state: 'healthy', failures: 0 },
    {
      name: 'ghost',
      cardUrl: 'http://127.0.0.1:1/.well-known/agent-card.json',
      state: 'skipped',
      reason: 'connect ECONNREFUSED 127.0.0.1:1',
      failures: 1,
    },
  ];
  return agentGraph(a2aTestTree(), peers, familyOf);
}

describe('agent graph pictures', () => {
  it('lists the specialists with their tool families and every peer with its health', () => {
    const { root, agents } = graph();
    expect(root).toBe('lango-orchestrator');
    expect(agents.find((a) => a.name === 'operator')).toMatchObject({ kind: 'llm', detail: ['exec', 'fs'] });
    expect(agents.find((a) => a.name === 'vault')).toMatchObject({ kind: 'llm', detail: ['secrets'] });
    expect(agents.find((a) => a.name === 'peer')).toMatchObject({ kind: 'remote', health: { state: 'healthy' } });
    expect(agents.at(-1)).toMatchObject({
      name: 'ghost',
      kind: 'remote',
      health: { state: 'skipped', reason: 'connect ECONNREFUSED 127.0.0.1:1' },
    });
  });

  it('names a tool outside every family by its own name, never an invented prefix family', () => {
    const { agents } = graph((tool) => (tool === 'exec_shell' ? 'exec' : undefined));
    expect(agents.find((a) => a.name === 'operator')?.detail).toEqual(['exec', 'fs_read']);
  });

  it('draws Mermaid and DOT with the skipped peer dashed and its reason', () => {
    const mermaid = toMermaid(graph());
    expect(mermaid.startsWith('flowchart TD\n')).toBe(true);
    expect(mermaid).toContain('["operator<br/>exec, fs"]');
    expect(mermaid).toMatch(/\(\["ghost \(remote\)<br\/>skipped: connect ECONNREFUSED 127\.0\.0\.1:1"\]\):::skipped/);
    expect(mermaid).toMatch(/root -\.-> a\d+/);
    const dot = toDot(graph());
    expect(dot.startsWith('digraph agents {')).toBe(true);
    expect(dot).toMatch(/label="ghost \(remote\)\\nskipped: connect ECONNREFUSED 127\.0\.0\.1:1", shape=ellipse/);
    expect(dot.trim().endsWith('}')).toBe(true);
  });

  it('draws an SVG with one focusable group per agent and escapes what it shows', () => {
    const svg = toSvg({ root: 'hub', agents: [{ name: 'a<b>&"c"', kind: 'llm', detail: ['x_*'] }] });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).not.toContain('a<b>');
    expect(svg).toContain('data-agent="a&lt;b&gt;&amp;&quot;c&quot;"');
    const full = toSvg(graph());
    expect(full.match(/<g class="agent/g)).toHaveLength(graph().agents.length + 1);
    expect(full.match(/tabindex="0"/g)).toHaveLength(graph().agents.length + 1);
  });
});
