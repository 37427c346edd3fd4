import { TaskState } from '@a2a-js/sdk';
import { getAddress, type Address } from 'viem';
import { createApp, type LangoApp } from '../../../src/app';
import { resolveConfig } from '../../../src/config/load';
import { createMemoryLogger } from '../../../src/log/logger';
import { a2aClient, answerText, asTask, partsText, textRequest } from '../../support/a2aClient';
import { startOpenAIServer, type OpenAIServer } from '../../support/openaiServer';
import { callTool, tempDir } from '../operator/context';
import { startTestChain, type TestChain } from '../../extras/evmChain';

const RECIPIENT = getAddress('0x00000000000000000000000000000000000c0c02');

describe('a payment above the approval threshold over A2A', () => {
  let chain: TestChain;
  let model: OpenAIServer;
  let app: LangoApp;
  let dir: string;
  let cleanup: () => void;

  beforeAll(async () => {
    chain = await startTestChain(8453);
  }, 60_000);
  afterAll(async () => {
    await chain.close();
  });
  beforeEach(async () => {
    ({ dir, cleanup } = tempDir('lango-pay-a2a-'));
    model = await startOpenAIServer();
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      agent: { provider: 'openai', apiKey: 'sk-pay-key', baseUrl: model.baseURL, model: 'scripted' },
      tools: { browser: { enabled: false } },
      payment: { enabled: true, rpcUrl: chain.rpcUrl, usdcAddress: chain.usdc, approvalThreshold: 1 },
    });
    app = await createApp(config, { logger: createMemoryLogger() });
  });
  afterEach(async () => {
    await app.close();
    await model.close();
    cleanup();
  });

  it('ends in input-required, sends nothing until the yes, then sends on chain and completes', async () => {
    expect(app.families.find((f) => f.name === 'payment')).toMatchObject({ state: 'on' });
    // The wallet is unsealed on the payment tools' first use: its own tool says where it is.
    const walletInfo = app.tools().find((owned) => owned.tool.name === 'payment_wallet_info')!.tool;
    const wallet = getAddress((await callTool(walletInfo, {})).address) as Address;
    expect((await app.stores.vault.key('wallet'))?.publicKey).toBe(wallet);
    await chain.fundEth(wallet, '1');
    await chain.mint(wallet, '10');
    const url = await app.listen();
    model.push(
      { toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'vault' } }] },
      { toolCalls: [{ name: 'payment_send', arguments: { to: RECIPIENT, amount: '2.5' } }] },
      (body) => ({
        text: `sent: ${JSON.parse(body.messages.filter((m) => m.role === 'tool').pop()?.content ?? '{}').status}`,
      }),
    );
    const client = await a2aClient(url, 'JSONRPC');
    const asked = asTask(await client.sendMessage(textRequest(`pay 2.5 USDC to ${RECIPIENT}`)));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(partsText(asked.status?.message?.parts)).toContain(`May I send 2.5 USDC to ${RECIPIENT}`);
    expect(await chain.balanceOf(RECIPIENT)).toBe(0n);

    const answered = asTask(
      await client.sendMessage(textRequest('yes', { contextId: asked.contextId, taskId: asked.id })),
    );
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(answered)).toBe('sent: confirmed');
    expect(await chain.balanceOf(RECIPIENT)).toBe(2_500_000n);
    expect(model.unexpected).toEqual([]);
  });
});
