import fs from 'node:fs';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { cliWorkdir, runCliInProcess } from '../support/cliProcess';
import { startCuttingProxy, type CuttingProxy } from '../support/cuttingProxy';
import { PacedRunner } from '../support/pacedRunner';

/**
 * `lango chat --url` over a connection that drops mid-answer (issue 27):
 * the node offers the generation extension, so the CLI resumes the stream
 * from its last event, says so, and shows the whole answer once.
 */
describe('lango chat --url resumes a dropped stream', () => {
  let proxy: CuttingProxy;
  let node: A2ATestNode;
  let runner: PacedRunner;
  let cwd: string;
  beforeEach(async () => {
    proxy = await startCuttingProxy();
    runner = new PacedRunner(10);
    node = await startA2ANode({ runner, config: { a2a: { baseUrl: proxy.url } } });
    proxy.target(Number(new URL(node.url).port));
    runner.release();
    cwd = cliWorkdir();
  });
  afterEach(async () => {
    await proxy.close();
    await node.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('reconnects after the stream is cut, says so, and prints the answer whole; the node ran one turn', async () => {
    proxy.cutNextStream(5);
    const { code, out, err } = await runCliInProcess(['--url', proxy.url, 'chat', 'tell me'], cwd);
    expect(code).toBe(0);
    expect(proxy.cuts).toBe(1);
    expect(out + err).toMatch(/the connection to the node dropped \(.+\); resuming/);
    expect(out.split(runner.answer.trim()).length - 1).toBe(1);
    expect(runner.turns).toEqual(['tell me']);
  });
});
