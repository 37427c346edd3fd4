import type { Request } from 'express';
import { walkAgents, type LlmAgent } from '../../agent/agent';
import type { PeerStatus } from '../../federation/health';
import { mayReach, OWNER, type Principal } from '../../principal';
import type { StoreHealth } from '../../store';
import { principalOfRequest } from './httpCall';
import { pageRouter } from './pageRouter';
import type { Pages } from './routes';

/** Options for {@link discoveryPages}. */
export interface DiscoveryOptions {
  /** The tree as `principal` may use it (its grant's specialists and remote agents); the owner's by default. */
  root: (principal?: Principal) => LlmAgent;
  /** Health of remote peers, by name (federation). */
  peerStatus?: () => PeerStatus[];
  /** The card this node holds for a remote peer, as JSON (federation). */
  remoteCard?: (name: string) => unknown;
}

/** What the catalog says about one agent. */
export interface AgentEntry {
  name: string;
  kind: 'local' | 'remote';
  description: string;
  /** The capability phrases from the description (`… Capabilities: a, b`), if any. */
  capabilities: string[];
  cardUrl?: string;
  health?: Pick<PeerStatus, 'reason' | 'lastError' | 'latencyMs' | 'security'> & {
    state: PeerStatus['state'] | 'unknown';
  };
}

/**
 * The sub-agents of the tree `principal` may use, local and remote, as the
 * catalog lists them, then the configured remote peers the tree does not
 * hold (refused by config) that its grant offers, with the reason. The owner
 * sees everything.
 */
export function agentCatalog(options: DiscoveryOptions, principal: Principal = OWNER): AgentEntry[] {
  const offered = (options.peerStatus?.() ?? []).filter((peer) => mayReach(principal, 'remoteAgents', peer.name));
  const peers = new Map(offered.map((peer) => [peer.name, peer]));
  const inTree = walkAgents(options.root(principal)).slice(1);
  const outOfTree = [...peers.values()]
    .filter((peer) => !inTree.some((agent) => agent.name === peer.name))
    .map((peer): AgentEntry => ({
      name: peer.name,
      kind: 'remote',
      description: '',
      capabilities: [],
      cardUrl: peer.cardUrl,
      health: { state: peer.state, reason: peer.reason, lastError: peer.lastError, latencyMs: peer.latencyMs },
    }));
  return inTree
    .map((agent): AgentEntry => {
      const capabilities = /Capabilities: (.+?)\.?$/.exec(agent.description)?.[1]?.split(', ') ?? [];
      if (agent.kind === 'llm')
        return { name: agent.name, kind: 'local', description: agent.description, capabilities };
      const peer = peers.get(agent.name);
      return {
        name: agent.name,
        kind: 'remote',
        description: agent.description,
        capabilities,
        cardUrl: agent.cardUrl,
        health: peer
          ? {
              state: peer.state,
              reason: peer.reason,
              lastError: peer.lastError,
              latencyMs: peer.latencyMs,
              security: peer.security,
            }
          : { state: 'unknown' },
      };
    })
    .concat(outOfTree);
}

/** The principal a discovery request runs as: whom the identity step found (anonymous by default). */
async function callerOf(req: Request): Promise<Principal> {
  return principalOfRequest(req);
}

/**
 * `GET /agents` and `GET /agents/:name/card`: a caller sees only the
 * specialists and remote agents its grant offers (an agent outside it is
 * "no agent named …", as if it did not exist); the owner sees everything.
 */
export function discoveryPages(options: DiscoveryOptions): Pages {
  const routes = pageRouter({ name: 'agents', access: 'caller' });
  routes.get('/agents', async (req, res) => {
    const principal = await callerOf(req);
    res.json({ root: options.root(principal).name, agents: agentCatalog(options, principal) });
  });
  routes.get('/agents/:name/card', async (req, res) => {
    const name = req.params.name;
    const agent = walkAgents(options.root(await callerOf(req))).find((a) => a.name === name);
    if (!agent) {
      res.status(404).json({ error: { code: 404, message: `no agent named ${name}` } });
      return;
    }
    const card = agent.kind === 'remote' ? options.remoteCard?.(String(name)) : undefined;
    if (card === undefined) {
      res.status(404).json({
        error: {
          code: 404,
          message: `${name} is ${agent.kind === 'remote' ? 'a remote agent whose card is not loaded' : 'a local agent; see /.well-known/agent-card.json'}`,
        },
      });
      return;
    }
    res.json(card);
  });
  return routes.pages();
}

/**
 * `GET /healthz` (the process serves) and `GET /readyz` (the database in use
 * answers, the tree is built, the node is not closing). Balancers and
 * orchestrators probe these without a proper `Host` (the host guard lets
 * them through), so they answer fixed words and nothing else: no error
 * text, no path, no address.
 */
export function healthPages(options: {
  root: () => LlmAgent;
  /** The database's own answer (`Storage.health`): bounded in time, never rejects. */
  health: () => Promise<StoreHealth>;
  closing: () => boolean;
}): Pages {
  const routes = pageRouter({ name: 'healthz', access: 'public' });
  routes.add({ methods: ['GET', 'HEAD'], path: '/healthz' }, (_req, res) => {
    res.json({ status: 'ok' });
  });
  routes.add({ methods: ['GET', 'HEAD'], path: '/readyz', name: 'readyz' }, async (_req, res) => {
    const database = await options.health();
    const checks: Record<string, string> = { database: database.ok ? 'ok' : database.problem };
    try {
      checks.tree = options.root().name ? 'ok' : 'empty';
    } catch {
      checks.tree = 'not built';
    }
    if (options.closing()) checks.server = 'shutting down';
    const ready = Object.values(checks).every((value) => value === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });
  return routes.pages();
}
