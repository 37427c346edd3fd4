/**
 * Remote peers for the start-up scenario, in one process: GOOD peers serving
 * a valid A2A card each (their own origin in the card), SILENT peers that
 * accept connections and never answer, and REFUSING ports that were bound and
 * released so connecting is refused. Prints `{"ready":true,"good":[urls],
 * "silent":[urls],"refusing":[urls]}`.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH } from '@a2a-js/sdk';
import type { AgentCard } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler } from '@a2a-js/sdk/server/express';

const GOOD = Number(process.env.GOOD ?? 35);
const SILENT = Number(process.env.SILENT ?? 5);
const REFUSING = Number(process.env.REFUSING ?? 10);

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function card(i: number, base: string): AgentCard {
  return {
    name: `peer${i}`,
    description: `Benchmark peer ${i}: answers questions about topic ${i}.`,
    supportedInterfaces: [
      { url: `${base}/`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    provider: undefined,
    version: '1.0.0',
    documentationUrl: '',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [
      {
        id: `topic${i}`,
        name: `Topic ${i}`,
        description: `Answers about topic ${i}.`,
        tags: [`topic${i}`],
        examples: [],
        inputModes: ['text'],
        outputModes: ['text'],
        securityRequirements: [],
      },
    ],
    signatures: [],
  } as AgentCard;
}

async function main(): Promise<void> {
  const good: string[] = [];
  for (let i = 0; i < GOOD; i++) {
    const server = http.createServer();
    const port = await listen(server);
    const base = `http://127.0.0.1:${port}`;
    const handler = new DefaultRequestHandler(card(i, base), new InMemoryTaskStore(), {
      execute: async () => {},
      cancelTask: async () => {},
    });
    const app = express();
    app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
    server.on('request', app);
    good.push(base);
  }
  const silent: string[] = [];
  const held: net.Socket[] = [];
  for (let i = 0; i < SILENT; i++) {
    const server = net.createServer((socket) => held.push(socket));
    silent.push(`http://127.0.0.1:${await listen(server)}`);
  }
  const refusing: string[] = [];
  for (let i = 0; i < REFUSING; i++) {
    const server = net.createServer();
    const port = await listen(server);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    refusing.push(`http://127.0.0.1:${port}`);
  }
  process.stdout.write(`${JSON.stringify({ ready: true, url: good[0], good, silent, refusing })}\n`);
  process.once('SIGTERM', () => process.exit(0));
}

main().catch((err: unknown) => {
  process.stderr.write(`peer farm failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
