import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { doctorReport } from '../../src/observe/nodeInfo';
import {
  createPackageLoader,
  installCommand,
  MissingPackageError,
  OPTIONAL_PACKAGES,
  type OptionalPackage,
} from '../../src/packages';
import { VectorIndex } from '../../src/tools/librarian/vectorIndex';
import { a2aClient, answerText, asTask, textRequest } from '../support/a2aClient';

/**
 * Issue 35: a node whose optional packages are all absent starts, serves and
 * answers; the tools of each missing part answer with its install command.
 * Absence is real: the composition root's package loader requires, for each
 * optional package, a module name that exists nowhere.
 */
const absentName = (name: OptionalPackage) => `lango-absent-${name.replace(/[@/]/g, '-')}`;
const packages = createPackageLoader({ locate: absentName });

describe('a node with every optional package absent', () => {
  let dir: string;
  let app: LangoApp;
  let url: string;
  let logger: MemoryLogger;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-optional-'));
    const config = resolveConfig({
      server: { port: 0 },
      dataDir: dir,
      security: { enabled: true },
      // Never contacted: the tools stop at the missing package first.
      payment: { enabled: true, chainId: 84532, rpcUrl: 'http://127.0.0.1:9', usdcAddress: `0x${'ab'.repeat(20)}` },
      // Loopback opened for the browser tool, so the call gets past the host policy to the missing browser.
      tools: { browser: { enabled: true, allow: ['127.0.0.1'] } },
    });
    logger = createMemoryLogger();
    // As on a machine with only Node: no Chromium of its own either.
    app = await createApp(config, { logger, packages, systemChromium: path.join(dir, 'no-chromium') });
    url = await app.listen();
  });
  afterAll(async () => {
    await app?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds none of them through its loader, and the real loader tells a missing package from an installed one', () => {
    for (const name of Object.keys(OPTIONAL_PACKAGES) as OptionalPackage[]) {
      expect(packages.installed(name)).toBe(false);
      expect(() => packages.load(name, 'this test')).toThrow(MissingPackageError);
    }
    // This checkout installs them as dev dependencies: the default loader finds them.
    expect(createPackageLoader().installed('viem')).toBe(true);
  });

  it('starts every family, and doctor names each missing package with its install command', async () => {
    const families = Object.fromEntries(app.families.map((f) => [f.name, f]));
    expect(families.payment).toMatchObject({ state: 'on', warning: expect.stringContaining(installCommand('viem')) });
    expect(families.browser).toMatchObject({
      state: 'on',
      warning: expect.stringContaining(installCommand('@sparticuz/chromium')),
    });
    expect(families.librarian).toMatchObject({
      state: 'on',
      warning: expect.stringContaining(installCommand('hnswlib-node')),
    });
    expect(families.payment.tools).toContain('payment_send');
    expect(families.browser.tools).toEqual(['browser_navigate', 'browser_action', 'browser_screenshot']);
    const report = await doctorReport(app.info);
    expect(report.families.filter((f) => f.state === 'broken').map((f) => f.name)).toEqual([]);
  });

  it('serves its card and health, and answers a plain message', async () => {
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const client = await a2aClient(url, 'JSONRPC');
    const task = asTask(await client.sendMessage(textRequest('hello there')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(task)).not.toBe('');
  });

  it.each([
    ['payment_balance', 'viem'],
    ['payment_send {"to": "0x00000000000000000000000000000000000b0b01", "amount": "0.5"}', 'viem'],
    ['browser_navigate url=http://127.0.0.1:9/', '@sparticuz/chromium'],
  ] as const)('answers "%s" with how to install %s', async (message, missing) => {
    const client = await a2aClient(url, 'JSONRPC');
    const task = asTask(await client.sendMessage(textRequest(message)));
    expect(answerText(task)).toContain(installCommand(missing));
  });

  it('still answers the tools that need no missing package (the payment ledger)', async () => {
    const client = await a2aClient(url, 'JSONRPC');
    const task = asTask(await client.sendMessage(textRequest('payment_history')));
    const text = answerText(task);
    expect(text).toContain('payments');
    expect(text).not.toContain('npm install');
  });

  it('searches vectors exactly without hnswlib-node, and logs how to get the HNSW index', async () => {
    const index = new VectorIndex({ dimensions: 4, logger, annThreshold: 3, packages });
    const unit = (i: number) => Float32Array.from([Math.cos(i), Math.sin(i), 0, 0]);
    for (let i = 0; i < 4; i++) index.upsert(`row-${i}`, unit(i));
    await index.buildAnn();
    expect(index.annReady).toBe(false);
    const { hits, method } = index.search(unit(2), 1);
    expect(method).toBe('exact');
    expect(hits[0].id).toBe('row-2');
    expect(logger.records.some((r) => r.message.includes(installCommand('hnswlib-node')))).toBe(true);
  });
});
