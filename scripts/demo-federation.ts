/**
 * `npm run demo:federation`: three lango nodes on loopback. The hub's remote
 * agents are peer-one (card fetched from its base URL), peer-two (card read
 * from agent-cards/demo-peer-two.json, so peer-two listens on its fixed port
 * 47102) and ghost (an address where nothing listens). The demo prints the
 * hub's agent tree with each remote's health, then sends one message to the
 * hub that the orchestrator delegates to peer-one over A2A.
 *
 * Everything runs on the embedded offline model: no API key, no network
 * beyond 127.0.0.1.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Role, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { createApp, type LangoApp } from '../src/app';
import { LangoConfig, type LangoConfigInput } from '../src/config/schema';
import { SecretRegistry } from '../src/log/redact';
import { createWinstonLogger } from '../src/log/winston';

const PEER_TWO_PORT = 47102;
const out = (line = '') => process.stdout.write(`${line}\n`);

async function node(
  name: string,
  port: number,
  a2a: LangoConfigInput['a2a'] = {},
): Promise<{ app: LangoApp; url: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `lango-demo-${name}-`));
  const config = LangoConfig.parse({
    server: { host: '127.0.0.1', port },
    dataDir,
    logLevel: 'warn',
    a2a: { agentName: name, ...a2a },
  });
  const logger = createWinstonLogger({ level: 'warn', pretty: false, secrets: new SecretRegistry() }).child({
    node: name,
  });
  const app = await createApp(config, { logger });
  const url = await app.listen();
  return { app, url };
}

async function deadPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

async function main(): Promise<void> {
  const started: LangoApp[] = [];
  try {
    const one = await node('peer-one', 0);
    started.push(one.app);
    const two = await node('peer-two', PEER_TWO_PORT);
    started.push(two.app);
    const ghost = await deadPort();
    out(`peer-one listens on ${one.url}, peer-two on ${two.url}; nothing listens on 127.0.0.1:${ghost}`);

    const hub = await node('hub', 0, {
      remoteAgents: [
        { name: 'peer-one', baseUrl: one.url },
        { name: 'peer-two', cardFile: 'demo-peer-two.json' },
        { name: 'ghost', baseUrl: `http://127.0.0.1:${ghost}` },
      ],
    });
    started.push(hub.app);
    out(`hub listens on ${hub.url}`);

    out("\nThe hub's agents (GET /agents):");
    const catalog = (await (await fetch(`${hub.url}/agents`)).json()) as {
      root: string;
      agents: Array<{ name: string; kind: string; health?: { state: string; lastError?: string } }>;
    };
    out(`  ${catalog.root}`);
    for (const agent of catalog.agents) {
      const health = agent.health
        ? ` [${agent.health.state}${agent.health.lastError ? `: ${agent.health.lastError}` : ''}]`
        : '';
      out(`  ├─ ${agent.name} (${agent.kind})${health}`);
    }
    out("\nThe hub's remote peers (lango agents --check):");
    for (const peer of hub.app.peers()) {
      const detail = peer.reason ?? peer.lastError;
      out(`  ${peer.name.padEnd(9)} ${peer.state.padEnd(8)} ${peer.cardUrl}${detail ? `\n            ${detail}` : ''}`);
    }
    if (!catalog.agents.some((a) => a.kind === 'remote')) {
      out(
        '\nThe hub lists no remote agents: createApp does not wire the federation yet (src/federation, createFederation).',
      );
      return;
    }

    // Naming the remote agent routes to it on the offline model; peer-one's own orchestrator then routes "plan" to its planner.
    const text = 'peer-one: plan my week';
    out(`\nSending to the hub: "${text}"`);
    const client = await new ClientFactory().createFromUrl(hub.url);
    const result = await client.sendMessage({
      tenant: '',
      configuration: undefined,
      metadata: undefined,
      message: {
        messageId: `demo-${Date.now()}`,
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        extensions: [],
        referenceTaskIds: [],
        metadata: undefined,
        parts: [
          { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
        ],
      },
    });
    const task = 'status' in result ? (result as Task) : undefined;
    const answer = task ? textOf(task.status?.message) : textOf(result as Message);
    const author = task?.status?.message?.metadata?.agent ?? task?.metadata?.agent ?? '(unknown)';
    out(`Answer (authored by ${String(author)}):\n${answer.length > 600 ? `${answer.slice(0, 600)}…` : answer}`);
  } finally {
    for (const app of started.reverse()) await app.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
