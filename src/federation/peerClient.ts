import type { AgentCard } from '@a2a-js/sdk';
import { createJsonRpcPeerClient, type PeerClient } from './jsonRpcPeer';
import { createPeerExchange, createPeerFetch, type PeerFetchOptions } from './peerFetch';
import { createPeerClient } from './remoteClient';

/**
 * The one place that decides which client talks to a peer. Two clients serve
 * a remote call under one contract (`test/federation/contracts/`): the lean
 * v1.0 JSON-RPC client (`jsonRpcPeer.ts`) and the SDK's (`remoteClient.ts`),
 * both over the bounded transport of `peerFetch.ts`.
 */

export type { PeerClient };

/** Which client a card gets, and for the lean one where it talks. */
export type PeerClientChoice = { kind: 'lean'; endpoint: string } | { kind: 'sdk' };

/**
 * The interface the SDK's `ClientFactory` would talk to decides: when it is
 * v1.0 JSON-RPC without a tenant, the lean client at its URL; anything else
 * (v0.3, HTTP+JSON, a tenant) the SDK's. Mirrors the factory's pick: the
 * first binding in card order the node has a transport for (JSON-RPC,
 * HTTP+JSON), that binding's 1.0 interface when there is one.
 */
export function peerClientChoice(card: AgentCard): PeerClientChoice {
  const best = new Map<string, AgentCard['supportedInterfaces'][number]>();
  for (const i of card.supportedInterfaces ?? []) {
    const binding = i.protocolBinding.toUpperCase();
    if (!best.has(binding) || i.protocolVersion === '1.0') best.set(binding, i);
  }
  const first = (card.supportedInterfaces ?? []).find((i) =>
    ['JSONRPC', 'HTTP+JSON'].includes(i.protocolBinding.toUpperCase()),
  );
  const chosen = first && best.get(first.protocolBinding.toUpperCase());
  const lean =
    chosen?.protocolBinding.toUpperCase() === 'JSONRPC' && chosen.protocolVersion === '1.0' && !chosen.tenant;
  return lean ? { kind: 'lean', endpoint: chosen.url } : { kind: 'sdk' };
}

/** Options of {@link peerClientFor}. */
export interface PeerClientOptions {
  /** The peer's transport: its pinned dispatcher, limits and per-call meters (`peerFetch.ts`). */
  transport: PeerFetchOptions;
  /** The peer does not stream: a send returns at once and the task is polled. */
  polling: boolean;
}

/**
 * The client for a pinned, validated card, as {@link peerClientChoice} decides; every request it sends finds its
 * call's meter (and so its bound) by the call's abort signal.
 * @example
 * const client = await peerClientFor(peer.sdkCard, { transport: { dispatcher, limits, meters, legacy, onDeviation }, polling: !peer.streaming });
 * const task = await client.getTask({ tenant: '', id, historyLength: 0 }, { signal });
 */
export async function peerClientFor(card: AgentCard, options: PeerClientOptions): Promise<PeerClient> {
  const choice = peerClientChoice(card);
  if (choice.kind === 'sdk')
    return createPeerClient(card, { fetchImpl: createPeerFetch(options.transport), polling: options.polling });
  return createJsonRpcPeerClient({
    endpoint: choice.endpoint,
    exchange: createPeerExchange(options.transport),
    polling: options.polling,
  });
}
