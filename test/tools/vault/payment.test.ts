import { getAddress, type Address } from 'viem';
import { ApprovalRequired, type AnyTool } from '../../../src/agent/tool';
import { paymentFamily } from '../../../src/tools/vault/family';
import { requireVault } from '../../../src/vault/vault';
import { byName, callTool, tempDir, toolContext } from '../operator/context';
import { familyDeps } from '../operator/deps';
import { startTestChain, type TestChain } from '../../extras/evmChain';

const RECIPIENT = getAddress('0x00000000000000000000000000000000000b0b01');

describe('payment tools against a real local EVM node with a test USDC', () => {
  let chain: TestChain;
  let dir: string;
  let cleanup: () => void;
  let deps: Awaited<ReturnType<typeof familyDeps>>;
  let tools: AnyTool[];
  let now: Date;
  let wallet: Address;
  const tool = (name: string) => byName(tools, name);

  beforeAll(async () => {
    chain = await startTestChain(8453);
  }, 60_000);
  afterAll(async () => {
    await chain.close();
  });

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    deps = await familyDeps(dir, {
      payment: {
        enabled: true,
        rpcUrl: chain.rpcUrl,
        usdcAddress: chain.usdc,
        chainId: 8453,
        perTransactionLimit: 5,
        dailyLimit: 8,
        approvalThreshold: 1,
      },
    });
    now = new Date('2026-03-01T10:00:00Z');
    deps.clock = () => now;
    tools = (await paymentFamily.create(deps)).tools;
    wallet = (await callTool(tool('payment_wallet_info'), {})).address;
    await chain.fundEth(wallet, '1');
    await chain.mint(wallet, '20');
  });
  afterEach(async () => {
    await deps.close();
    cleanup();
  });

  it('has a wallet whose key is sealed in the vault and survives a restart', async () => {
    const info = await callTool(tool('payment_wallet_info'), {});
    expect(info).toEqual({
      address: wallet,
      chainId: 8453,
      token: getAddress(chain.usdc),
      symbol: 'USDC',
      decimals: 6,
    });
    const row = deps.storage.db.prepare(`SELECT private_key FROM vault_keys WHERE name = 'wallet'`).get() as {
      private_key: string;
    };
    expect(row.private_key).toMatch(/^v1\./);
    await deps.close();
    deps = await familyDeps(dir, { payment: { enabled: true, rpcUrl: chain.rpcUrl, usdcAddress: chain.usdc } });
    const again = (await paymentFamily.create(deps)).tools;
    expect((await callTool(byName(again, 'payment_wallet_info'), {})).address).toBe(wallet);
  });

  it('reads USDC and ETH balances from the chain', async () => {
    expect(await callTool(tool('payment_balance'), {})).toEqual({ address: wallet, usdc: '20', eth: '1' });
    expect((await callTool(tool('payment_balance'), { address: RECIPIENT.toLowerCase() })).usdc).toBe('0');
    await expect(callTool(tool('payment_balance'), { address: 'nope' })).rejects.toThrow('not an Ethereum address');
  });

  it('sends below the approval threshold at once, records it and counts it against the day', async () => {
    const before = await chain.balanceOf(RECIPIENT);
    const sent = await callTool(tool('payment_send'), { to: RECIPIENT, amount: '0.75', memo: 'coffee' });
    expect(sent).toMatchObject({
      status: 'confirmed',
      to: RECIPIENT,
      amount: '0.75',
      spentToday: '0.75',
      remainingToday: '7.25',
    });
    expect(sent.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await chain.balanceOf(RECIPIENT)) - before).toBe(750_000n);
    const { payments } = await callTool(tool('payment_history'), {});
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({
      to: RECIPIENT,
      from: wallet,
      amount: '0.75',
      status: 'confirmed',
      txHash: sent.txHash,
      memo: 'coffee',
    });
  });

  it('holds a send above the threshold for approval and sends it after the yes', async () => {
    const before = await chain.balanceOf(RECIPIENT);
    await expect(callTool(tool('payment_send'), { to: RECIPIENT, amount: '3' })).rejects.toBeInstanceOf(
      ApprovalRequired,
    );
    await expect(callTool(tool('payment_send'), { to: RECIPIENT, amount: '3' })).rejects.toThrow(
      `May I send 3 USDC to ${RECIPIENT}`,
    );
    expect((await callTool(tool('payment_history'), {})).payments).toEqual([]);
    expect(await chain.balanceOf(RECIPIENT)).toBe(before);
    const sent = await callTool(tool('payment_send'), { to: RECIPIENT, amount: '3' }, toolContext({ approved: true }));
    expect(sent.status).toBe('confirmed');
    expect((await chain.balanceOf(RECIPIENT)) - before).toBe(3_000_000n);
  });

  it('refuses sends above the per-transaction limit and past the daily limit, which resets at 00:00 UTC', async () => {
    const approved = toolContext({ approved: true });
    await expect(callTool(tool('payment_send'), { to: RECIPIENT, amount: '5.01' }, approved)).rejects.toThrow(
      'above the per-transaction limit of 5 USDC',
    );
    await callTool(tool('payment_send'), { to: RECIPIENT, amount: '5' }, approved);
    await callTool(tool('payment_send'), { to: RECIPIENT, amount: '2.5' }, approved);
    await expect(callTool(tool('payment_send'), { to: RECIPIENT, amount: '1' }, approved)).rejects.toThrow(
      'would pass the daily limit of 8 USDC (7.5 already sent today)',
    );
    expect(await callTool(tool('payment_limits'), {})).toMatchObject({ spentToday: '7.5', remainingToday: '0.5' });
    now = new Date('2026-03-02T00:00:01Z');
    expect(await callTool(tool('payment_limits'), {})).toMatchObject({ spentToday: '0', remainingToday: '8' });
    expect((await callTool(tool('payment_send'), { to: RECIPIENT, amount: '1' }, approved)).status).toBe('confirmed');
  });

  it('records a send the chain refuses as failed and does not count it', async () => {
    const approved = toolContext({ approved: true });
    await callTool(tool('payment_send'), { to: RECIPIENT, amount: '5' }, approved);
    now = new Date('2026-03-02T10:00:00Z');
    await callTool(tool('payment_send'), { to: RECIPIENT, amount: '5' }, approved);
    now = new Date('2026-03-03T10:00:00Z');
    await callTool(tool('payment_send'), { to: RECIPIENT, amount: '5' }, approved);
    now = new Date('2026-03-04T10:00:00Z');
    // 5 + 5 + 5 of 20 sent: 5 left, so 5 works but then the wallet is empty.
    await callTool(tool('payment_send'), { to: RECIPIENT, amount: '5' }, approved);
    await expect(callTool(tool('payment_send'), { to: RECIPIENT, amount: '0.5' })).rejects.toThrow('payment failed');
    const { payments } = await callTool(tool('payment_history'), { limit: 1 });
    expect(payments[0]).toMatchObject({ amount: '0.5', status: 'failed', txHash: null });
    expect(payments[0].error).toBe('reverted: balance');
    expect((await callTool(tool('payment_limits'), {})).spentToday).toBe('5');
  });

  it('never puts the wallet key in results or logs, and registers it for masking', async () => {
    const { privateKey } = await requireVault(deps.vault).ensureKey('wallet', 'secp256k1', () => {
      throw new Error('the wallet key exists already');
    });
    expect(privateKey).toMatch(/^0x[0-9a-f]{64}$/);
    const results = JSON.stringify([
      await callTool(tool('payment_wallet_info'), {}),
      await callTool(tool('payment_send'), { to: RECIPIENT, amount: '0.1' }),
      await callTool(tool('payment_history'), {}),
      await callTool(tool('payment_limits'), {}),
    ]);
    expect(results).not.toContain(privateKey.slice(2));
    expect(JSON.stringify(deps.logger.records)).not.toContain(privateKey.slice(2));
    expect(deps.secrets.redactText(`key ${privateKey}`)).toBe('key [REDACTED]');
  });
});

describe('payment gating', () => {
  it('is off by default and broken without the vault or an address for a non-Base chain', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const plain = await familyDeps(dir);
      expect(paymentFamily.enabled(plain.config)).toBe(false);
      await plain.close();
      const noVault = await familyDeps(dir, { payment: { enabled: true }, security: { enabled: false } });
      await expect(paymentFamily.create(noVault)).rejects.toThrow('payment needs the vault');
      await noVault.close();
      const otherChain = await familyDeps(dir, {
        payment: { enabled: true, chainId: 10, rpcUrl: 'http://127.0.0.1:1' },
      });
      await expect(paymentFamily.create(otherChain)).rejects.toThrow('payment.usdcAddress must be');
      await otherChain.close();
    } finally {
      cleanup();
    }
  });

  it('refuses to send when the RPC serves another chain than configured', async () => {
    const other = await startTestChain(1337);
    const { dir, cleanup } = tempDir();
    const deps = await familyDeps(dir, {
      payment: { enabled: true, rpcUrl: other.rpcUrl, usdcAddress: other.usdc, chainId: 8453 },
    });
    try {
      const tools = (await paymentFamily.create(deps)).tools;
      await expect(callTool(byName(tools, 'payment_send'), { to: RECIPIENT, amount: '0.5' })).rejects.toThrow(
        'serves chain 1337, not the configured chain 8453',
      );
      expect((await callTool(byName(tools, 'payment_history'), {})).payments).toEqual([]);
    } finally {
      await deps.close();
      cleanup();
      await other.close();
    }
  }, 60_000);
});
