import { createAgentTreeHolder } from '../../src/orchestration/liveTree';
import { a2aTestPeer, a2aTestTools, startA2ANode, type A2ATestNode } from '../support/a2aServer';

/** A response body as JSON (fetch types it `unknown`). */
const json = (response: Response): Promise<any> => response.json();

/** Issue 28: the catalog shows a caller only what its grant offers; the owner sees everything. */
describe('discovery by grant', () => {
  let node: A2ATestNode;
  const holder = createAgentTreeHolder({ tools: () => a2aTestTools(), remoteAgents: [a2aTestPeer('peer')] });
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
  beforeAll(async () => {
    node = await startA2ANode({
      config: {
        a2a: {
          auth: {
            callers: [
              {
                name: 'alice',
                bearerTokens: ['alice-token'],
                grant: { specialists: ['operator'], remoteAgents: [], toolFamilies: 'all' },
              },
              {
                name: 'bob',
                bearerTokens: ['bob-token'],
                grant: { specialists: ['vault'], remoteAgents: ['peer', 'later'], toolFamilies: 'all' },
              },
              { name: 'me', bearerTokens: ['owner-token'], owner: true },
            ],
          },
        },
      },
      extra: {
        root: (principal) => holder.current(principal),
        peerStatus: () => [
          {
            name: 'peer',
            cardUrl: 'http://127.0.0.1:9/peer/.well-known/agent-card.json',
            state: 'healthy',
            failures: 0,
          },
          {
            name: 'later',
            cardUrl: 'http://127.0.0.1:9/later/.well-known/agent-card.json',
            state: 'skipped',
            reason: 'disabled in config (enabled: false)',
            failures: 0,
          },
        ],
        remoteCard: (name) => (name === 'peer' ? { name: 'peer' } : undefined),
      },
    });
  });
  afterAll(() => node.close());

  const names = async (token: string) =>
    ((await json(await fetch(`${node.url}/agents`, bearer(token)))).agents as { name: string }[]).map((a) => a.name);

  it('lists only the specialists and remote agents of the caller’s grant', async () => {
    expect(await names('alice-token')).toEqual(['operator']);
    expect(await names('bob-token')).toEqual(['vault', 'peer', 'later']);
  });

  it('shows the owner everything', async () => {
    expect(await names('owner-token')).toEqual(
      expect.arrayContaining(['operator', 'vault', 'planner', 'peer', 'later']),
    );
  });

  it('serves a remote card only to a caller offered that agent; to others it does not exist', async () => {
    const refused = await fetch(`${node.url}/agents/peer/card`, bearer('alice-token'));
    expect(refused.status).toBe(404);
    expect((await json(refused)).error.message).toBe('no agent named peer');
    expect((await fetch(`${node.url}/agents/peer/card`, bearer('bob-token'))).status).toBe(200);
    expect((await fetch(`${node.url}/agents/vault/card`, bearer('alice-token'))).status).toBe(404);
    expect((await json(await fetch(`${node.url}/agents/vault/card`, bearer('alice-token')))).error.message).toBe(
      'no agent named vault',
    );
    expect((await fetch(`${node.url}/agents`)).status).toBe(401);
  });
});
