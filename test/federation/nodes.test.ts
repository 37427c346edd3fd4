import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { walkAgents } from '../../src/agent/agent';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { a2aClient, answerText, asTask, partsText, textRequest } from '../support/a2aClient';
import { deadPort } from '../support/federationPeers';
import { logged } from '../support/federationRun';
import { waitFor } from '../support/waitFor';

/**
 * Whole lango nodes on loopback (createApp, offline model): a hub whose
 * remote agents are a real peer node and an address where nothing listens.
 */
describe('a hub node federating a peer node', () => {
  const apps: LangoApp[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    while (apps.length) await apps.pop()!.close();
    while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
  });

  async function node(
    name: string,
    a2a: LangoConfigInput['a2a'] = {},
    port = 0,
  ): Promise<{ app: LangoApp; url: string; logger: MemoryLogger }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lango-fed-${name}-`));
    dirs.push(dir);
    const config = resolveConfig({
      server: { port },
      dataDir: dir,
      tools: { browser: { enabled: false } },
      a2a: { agentName: name, ...a2a },
    });
    const logger = createMemoryLogger();
    const app = await createApp(config, { logger });
    apps.push(app);
    return { app, url: await app.listen(), logger };
  }

  it('puts the reachable peer in its tree, skips the dead one with a warning, and delegates one exchange to the peer', async () => {
    const peer = await node('peer-one');
    const ghost = await deadPort();
    const hub = await node('hub', {
      cardFetchTimeoutMs: 10_000,
      remoteAgents: [
        { name: 'peer-one', baseUrl: peer.url },
        { name: 'ghost', baseUrl: `http://127.0.0.1:${ghost}` },
      ],
    });

    // The dead one stays in the tree as a stand-in that answers it is unavailable (issue 28).
    expect(
      walkAgents(hub.app.root())
        .filter((a) => a.kind === 'remote')
        .map((a) => [a.name, a.description.startsWith('Unavailable now')]),
    ).toEqual([
      ['peer-one', false],
      ['ghost', true],
    ]);
    expect(hub.app.peers()).toEqual([
      expect.objectContaining({ name: 'peer-one', state: 'healthy', protocolVersion: '1.0' }),
      expect.objectContaining({ name: 'ghost', state: 'skipped', reason: expect.stringContaining('ECONNREFUSED') }),
    ]);
    expect(logged(hub.logger, 'warn', 'remote agent skipped')[0].meta).toMatchObject({
      name: 'ghost',
      url: `http://127.0.0.1:${ghost}/.well-known/agent-card.json`,
    });

    const catalog = (await (await fetch(`${hub.url}/agents`)).json()) as {
      agents: Array<{ name: string; kind: string; health?: { state: string; reason?: string } }>;
    };
    expect(catalog.agents.find((a) => a.name === 'peer-one')).toMatchObject({
      kind: 'remote',
      health: { state: 'healthy' },
    });
    // The skipped peer is listed too, last, with its reason.
    expect(catalog.agents.at(-1)).toMatchObject({
      name: 'ghost',
      kind: 'remote',
      health: { state: 'skipped', reason: expect.stringContaining('ECONNREFUSED') },
    });

    const client = await a2aClient(hub.url, 'JSONRPC');
    const task = asTask(await client.sendMessage(textRequest('peer-one: plan my week')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(task)).toContain("I'm planner");
    // Authored by the remote agent; the peer node's own orchestrator routed "plan" to its planner.
    expect(task.metadata?.agent).toBe('peer-one');
    expect(logged(hub.logger, 'info', 'remote call settled')[0].meta).toMatchObject({
      remote: 'peer-one',
      state: 'completed',
    });
  });

  it("carries the caller's W3C trace id across the hop: both nodes' log lines name it", async () => {
    const peer = await node('peer-one');
    const hub = await node('hub', { remoteAgents: [{ name: 'peer-one', baseUrl: peer.url }] });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const reply = await fetch(hub.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'A2A-Version': '1.0',
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'trace-1', role: 'ROLE_USER', parts: [{ text: 'peer-one: plan my week' }] } },
      }),
    });
    const body = (await reply.json()) as { result: { task: { status: { state: string } } } };
    expect(body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const traced = (logger: MemoryLogger) => logger.records.filter((r) => r.meta.traceId === traceId);
    expect(traced(hub.logger).map((r) => r.message)).toEqual(
      expect.arrayContaining(['remote call', 'remote call settled']),
    );
    // The peer continued the same trace: its turn's log lines (the runner's, the A2A task's) carry the id.
    await waitFor(() => traced(peer.logger).length > 0, 20_000, "the peer's log lines of the trace");
    // A request without a traceparent starts a trace of its own on the hub, continued at the peer.
    const client = await a2aClient(hub.url, 'JSONRPC');
    await client.sendMessage(textRequest('peer-one: plan my month'));
    const hubIds = new Set(hub.logger.records.map((r) => r.meta.traceId).filter((id) => id && id !== traceId));
    const peerIds = new Set(peer.logger.records.map((r) => r.meta.traceId).filter((id) => id && id !== traceId));
    expect([...hubIds].filter((id) => peerIds.has(id))).toHaveLength(1);
  });

  it('ends a delegation loop between two nodes with a clear note instead of recursing', async () => {
    const portA = await deadPort();
    const portB = await deadPort();
    // A starts first and finds B down; B starts with A up; A's background probe then lets B in.
    const a = await node('node-a', { remoteAgents: [{ name: 'node-b', baseUrl: `http://127.0.0.1:${portB}` }] }, portA);
    const b = await node('node-b', { remoteAgents: [{ name: 'node-a', baseUrl: `http://127.0.0.1:${portA}` }] }, portB);
    expect(b.app.peers()[0]).toMatchObject({ name: 'node-a', state: 'healthy' });
    await waitFor(() => a.app.peers()[0]?.state === 'healthy', 20_000, "A's background probe to let B in");
    expect(a.app.peers()[0]).toMatchObject({ name: 'node-b', state: 'healthy' });

    // Naming both nodes makes each orchestrator (offline model) route to the other one.
    const client = await a2aClient(a.url, 'JSONRPC');
    const task = asTask(await client.sendMessage(textRequest('node-a node-b: ping each other')));
    // Whether node-b reports the refusal as its answer (artifact) or as its failure (status), the caller reads it.
    const text = `${answerText(task)}${partsText(task.status?.message?.parts)}`;
    // The request comes back to node-a (a → b → a): node-a's executor finds itself on the hop path and refuses.
    expect(text).toMatch(/delegation loop/);
    const refusals = logged(a.logger, 'warn', 'request refused');
    expect(refusals).toHaveLength(1);
    expect(String(refusals[0].meta.reason)).toMatch(
      /^delegation loop: node urn:lango:[0-9a-f-]+ is already on the path/,
    );
  }, 30_000);
});
