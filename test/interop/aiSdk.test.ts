import path from 'node:path';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { runChildClient } from './support/childPeer';

/**
 * Issue 12: the Vercel AI SDK with a2a-ai-provider as a client of the node
 * (an A2A agent used as a language model; the provider drives
 * @a2a-js/sdk 0.3's client). One conversation is one contextId. Its
 * blocking path shows the task's status message followed by every
 * artifact; its streaming path shows artifacts only.
 */
const client = path.join(__dirname, '../extras/aiSdkClient.mjs');

describe('the AI SDK (a2a-ai-provider) as a client of the node', () => {
  let node: A2ATestNode;
  beforeAll(async () => {
    node = await startA2ANode();
  });
  afterAll(() => node.close());
  const cardUrl = () => `${node.url}/.well-known/agent-card.json`;

  it('streamText: the answer arrives as text deltas, once; a question ends the turn; the same context continues', async () => {
    const turns = await runChildClient(client, [cardUrl(), 'stream', 'hello ai sdk', 'approve the payment', 'yes']);
    expect(turns.map((t) => [t.message, t.text, t.finishReason])).toEqual([
      ['hello ai sdk', 'echo: hello ai sdk', 'stop'],
      // The provider's stream reads artifacts only, so the question (in the status message) is not shown.
      ['approve the payment', '', 'stop'],
      ['yes', 'approved: yes', 'stop'],
    ]);
    expect(turns[0].deltas.join('')).toBe('echo: hello ai sdk');
    expect(turns.flatMap((t) => t.deltas).filter((d: unknown) => typeof d !== 'string')).toEqual([]);
  });

  it('generateText: the answer once (the closing status carries no copy), a question from the status message, its answer in the same task', async () => {
    const turns = await runChildClient(client, [cardUrl(), 'generate', 'hello ai sdk', 'approve the payment', 'yes']);
    expect(turns.map((t) => [t.message, t.text, t.finishReason])).toEqual([
      ['hello ai sdk', 'echo: hello ai sdk', 'stop'],
      ['approve the payment', 'Approve the payment of 5 USDC? (yes/no)', 'stop'],
      ['yes', 'approved: yes', 'stop'],
    ]);
  });
});
