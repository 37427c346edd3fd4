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
  const script = path.join(__dirname, '../extras/a2aAdkClient.mjs');
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
    // The answer comes once, as the artifact: the closing status carries no copy, so ADK shows no second event.
    const answers = hello.events.filter((e) => e.text.includes('echo: hello adk'));
    expect(answers).toEqual([
      expect.objectContaining({ author: 'lango_node', kind: 'artifact-update', partial: false }),
    ]);
    expect(hello.events.at(-1)).toBe(answers[0]);

    expect(approve.events.at(-1)).toMatchObject({
      state: 'input-required',
      text: 'Approve the payment of 5 USDC? (yes/no)',
    });
    expect(yes.events.at(-1)).toMatchObject({ kind: 'artifact-update', partial: false });
    expect(yes.events.filter((e) => /^approved: /.test(e.text))).toHaveLength(1);

    // One ADK session is one A2A context, so one lango session.
    const contexts = new Set(turns.flatMap((t) => t.events.map((e) => e.contextId)).filter(Boolean));
    expect(contexts.size).toBe(1);
    expect(hello.events.every((e) => !e.errorCode)).toBe(true);
    // Three turns, each an ADK client process; 30 s ran out at load 15.
  }, 90_000);
});
