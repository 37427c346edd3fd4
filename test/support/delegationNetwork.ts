import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp } from '../../src/app';
import { resolveConfig } from '../../src/config/load';
import type { LangoConfigInput } from '../../src/config/schema';
import { createMemoryLogger, type MemoryLogger } from '../../src/log/logger';
import { scriptedAgent, startOpenAIServer, type OpenAIServer } from './openaiServer';
import { startOidcIssuer, type IssuerClient, type OidcIssuer } from './oidcIssuer';

/**
 * A network of whole lango nodes on 127.0.0.1 (createApp, each playing its
 * model with a scripted OpenAI-compatible server of its own, through the
 * node's own client) and one real OpenID provider (`oidc-provider`) that
 * issues their callers' tokens and performs their token exchanges (RFC
 * 8693): the caller X → node A → node B → node C of issue 33.
 */

/** The scopes every node's audience offers. */
export const SCOPES = 'lango:chat lango:librarian';
/** Each node's audience: what its callers' tokens (and tokens exchanged for it) carry. */
export const AUDIENCE = {
  a: 'https://node-a.example/a2a',
  b: 'https://node-b.example/a2a',
  c: 'https://node-c.example/a2a',
} as const;
/** The issuer's clients: the caller X and one per node (each node's client may exchange tokens given to it). */
export const CLIENTS = {
  x: { client_id: 'x', client_secret: 'x-secret-61f0c2d9a4', scope: SCOPES },
  a: { client_id: 'node-a', client_secret: 'node-a-secret-3e9b7c51', scope: SCOPES },
  b: { client_id: 'node-b', client_secret: 'node-b-secret-8d2a6f04', scope: SCOPES },
} satisfies Record<string, IssuerClient>;

/** The issuer of the network. */
export function startNetworkIssuer(): Promise<OidcIssuer> {
  return startOidcIssuer({
    clients: Object.values(CLIENTS),
    resources: Object.fromEntries(Object.values(AUDIENCE).map((audience) => [audience, { scope: SCOPES }])),
    exchangers: { 'node-a': AUDIENCE.a, 'node-b': AUDIENCE.b },
  });
}

/** One running node of the network. */
export interface NetworkNode {
  app: LangoApp;
  url: string;
  /** The node's scripted model server: what it answers is pushed onto it, what the node asked is recorded. */
  model: OpenAIServer;
  logger: MemoryLogger;
  dir: string;
}

/** Starts nodes and stops them all (and removes their folders) at the end. */
export function networkNodes(): {
  start(name: string, a2a: LangoConfigInput['a2a'], more?: Omit<LangoConfigInput, 'a2a'>): Promise<NetworkNode>;
  closeAll(): Promise<void>;
} {
  const started: NetworkNode[] = [];
  return {
    async start(name, a2a, more = {}) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lango-net-${name}-`));
      const model = await startOpenAIServer();
      const config = resolveConfig({
        server: { port: 0 },
        dataDir: dir,
        tools: { browser: { enabled: false } },
        agent: scriptedAgent(model),
        ...more,
        a2a: { agentName: name, ...a2a },
      });
      const logger = createMemoryLogger();
      const app = await createApp(config, { logger });
      const node = { app, url: await app.listen(), model, logger, dir };
      started.push(node);
      return node;
    },
    async closeAll() {
      const unexpected: string[] = [];
      for (const node of started.splice(0).reverse()) {
        await node.app.close();
        await node.model.close();
        fs.rmSync(node.dir, { recursive: true, force: true });
        if (node.model.unexpected.length > 0) unexpected.push(`${node.model.unexpected.length} at ${node.url}`);
      }
      // A model call the test scripted no answer for was answered HTTP 500: the test did not run as it says.
      if (unexpected.length > 0) throw new Error(`model calls nothing was scripted for: ${unexpected.join(', ')}`);
    },
  };
}

/** `a2a.auth` of a node of audience `audience` that knows X (and, as callers, the nodes that may act for X). */
export function networkAuth(
  issuer: OidcIssuer,
  audience: string,
  options: { actors?: string[]; callers?: NonNullable<LangoConfigInput['a2a']>['auth'] } = {},
): NonNullable<LangoConfigInput['a2a']>['auth'] {
  return {
    oidc: { issuer: issuer.url, audience, allowPrivateNetwork: true },
    ...(options.actors ? { delegation: { actors: options.actors } } : {}),
    ...options.callers,
  };
}

/** A remote agent entry calling `url` on behalf of its callers, as `client`, for `audience`. */
export function onBehalfOfEntry(
  name: string,
  url: string,
  issuer: { url: string } | string,
  client: IssuerClient,
  audience: string,
  onBehalfOf: 'required' | 'preferred' = 'required',
): NonNullable<NonNullable<LangoConfigInput['a2a']>['remoteAgents']>[number] {
  const tokenUrl = typeof issuer === 'string' ? issuer : `${issuer.url}/token`;
  return {
    name,
    baseUrl: url,
    auth: {
      type: 'tokenExchange',
      tokenUrl,
      clientId: client.client_id,
      clientSecret: client.client_secret,
      audience,
      onBehalfOf,
    },
  };
}
