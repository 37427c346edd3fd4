import { execFile } from 'node:child_process';
import path from 'node:path';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';

interface AdkEvent {
  author: string;
  text: string;
  turnComplete?: boolean;
  kind?: string;
  state?: string;
  contextId?: string;
  errorCode?: string;
}

/** Runs Google ADK-JS's RemoteA2AAgent (in a child process: ADK is ESM) against `url`, one turn per message. */
function adkConversation(url: string, messages: string[]): Promise<{ message: string; events: AdkEvent[] }[]> {
  const script = path.join(__dirname, '../support/a2aAdkClient.mjs');
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, url, ...messages], { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`ADK client failed: ${err.message}\n${stderr}`));
      else
        resolve(
          stdout
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line)),
        );
    });
  });
}

describe("Google ADK-JS's RemoteA2AAgent as a client of the node", () => {
  let node: A2ATestNode;
  beforeAll(async () => {
    node = await startA2ANode();
  });
  afterAll(() => node.close());

  it('streams progress, gets the answer, is asked a question and answers it in the same context', async () => {
    const turns = await adkConversation(node.url, ['hello adk', 'approve the payment', 'yes']);
    expect(turns).toHaveLength(3);

    const [hello, approve, yes] = turns;
    expect(hello.events.filter((e) => e.state === 'working').map((e) => e.text)).toEqual([
      'lango-orchestrator delegated to operator',
      'operator started exec_shell',
      'operator finished exec_shell',
    ]);
    const last = hello.events.at(-1)!;
    expect(last).toMatchObject({
      author: 'lango_node',
      text: 'echo: hello adk',
      turnComplete: true,
      state: 'completed',
    });
    expect(hello.events.some((e) => e.kind === 'artifact-update' && e.text === 'echo: hello adk')).toBe(true);

    expect(approve.events.at(-1)).toMatchObject({
      state: 'input-required',
      text: 'Approve the payment of 5 USDC? (yes/no)',
    });
    expect(yes.events.at(-1)).toMatchObject({ state: 'completed', turnComplete: true });
    expect(yes.events.at(-1)?.text).toMatch(/^approved: /);

    // One ADK session is one A2A context, so one lango session.
    const contexts = new Set(turns.flatMap((t) => t.events.map((e) => e.contextId)).filter(Boolean));
    expect(contexts.size).toBe(1);
    expect(hello.events.every((e) => !e.errorCode)).toBe(true);
  });
});
