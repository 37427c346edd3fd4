import { startA2ANode, type A2ATestNode } from '../support/a2aServer';

/** A response body as JSON (fetch types it `unknown`). */
const json = (response: Response): Promise<any> => response.json();

describe('discovery and health', () => {
  let node: A2ATestNode;
  const peerCard = {
    name: 'peer',
    supportedInterfaces: [{ url: 'http://127.0.0.1:9/peer', protocolBinding: 'JSONRPC' }],
  };
  beforeAll(async () => {
    node = await startA2ANode({
      extra: {
        peerStatus: () => [
          {
            name: 'peer',
            cardUrl: 'http://127.0.0.1:9/peer/.well-known/agent-card.json',
            state: 'healthy',
            latencyMs: 12,
            failures: 0,
          },
        ],
        remoteCard: (name) => (name === 'peer' ? peerCard : undefined),
      },
    });
  });
  afterAll(() => node.close());

  it('lists local and remote sub-agents with capabilities, and remote card URL and health', async () => {
    const response = await fetch(`${node.url}/agents`);
    expect(response.status).toBe(200);
    const catalog = await json(response);
    expect(catalog.root).toBe('lango-orchestrator');
    const operator = catalog.agents.find((a: { name: string }) => a.name === 'operator');
    expect(operator).toMatchObject({ kind: 'local', capabilities: ['command execution', 'file operations'] });
    expect(operator.cardUrl).toBeUndefined();
    const peer = catalog.agents.find((a: { name: string }) => a.name === 'peer');
    expect(peer).toMatchObject({
      kind: 'remote',
      description: 'Translates documents between languages',
      cardUrl: 'http://127.0.0.1:9/peer/.well-known/agent-card.json',
      health: { state: 'healthy', latencyMs: 12 },
    });
    expect(JSON.stringify(catalog)).not.toMatch(/exec_shell|SECRET ORCHESTRATOR PROMPT/);
  });

  it('serves the card held for a remote peer, and 404s for local or unknown agents', async () => {
    const held = await fetch(`${node.url}/agents/peer/card`);
    expect(held.status).toBe(200);
    expect(await json(held)).toEqual(peerCard);
    const local = await fetch(`${node.url}/agents/operator/card`);
    expect(local.status).toBe(404);
    expect((await json(local)).error.message).toMatch(/local agent/);
    expect((await fetch(`${node.url}/agents/nobody/card`)).status).toBe(404);
  });

  it('reports the process up on /healthz and the database and tree ready on /readyz', async () => {
    expect(await json(await fetch(`${node.url}/healthz`))).toEqual({ status: 'ok' });
    const ready = await fetch(`${node.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await json(ready)).toEqual({ status: 'ready', checks: { database: 'ok', tree: 'ok' } });
  });

  it('reports not ready (503) when the database is closed', async () => {
    const other = await startA2ANode();
    try {
      other.db.close();
      const response = await fetch(`${other.url}/readyz`);
      expect(response.status).toBe(503);
      expect((await json(response)).checks.database).not.toBe('ok');
    } finally {
      await other.a2a.close();
      await other.close().catch(() => undefined);
    }
  });
});
