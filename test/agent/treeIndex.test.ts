import { routesFor, treeIndexes } from '../../src/agent/transfer';
import { makeAgent } from './helpers';

const tree = () => {
  const vault = makeAgent({ name: 'vault', keywords: ['secret'] });
  return makeAgent({ name: 'orchestrator', subAgents: [vault] });
};

describe('tree indexes', () => {
  it('works out an agent’s routes once per tree, as routesFor gives them', () => {
    const root = tree();
    const indexOf = treeIndexes();
    const index = indexOf(root);
    expect(indexOf(root)).toBe(index);
    const routes = index.routes('orchestrator');
    expect(routes).toEqual(routesFor(root, index));
    expect(index.routes('orchestrator')).toBe(routes);
    expect(Object.isFrozen(routes)).toBe(true);
    expect(index.routes('vault').map((r) => r.name)).toEqual(['orchestrator']);
    expect(index.routes('nobody')).toEqual([]);
  });

  it('indexes a rebuilt tree afresh: a new root is a new index', () => {
    const indexOf = treeIndexes();
    const first = indexOf(tree());
    const rebuilt = makeAgent({ name: 'orchestrator', subAgents: [makeAgent({ name: 'coder' })] });
    expect(indexOf(rebuilt)).not.toBe(first);
    expect(
      indexOf(rebuilt)
        .routes('orchestrator')
        .map((r) => r.name),
    ).toEqual(['coder']);
  });
});
