/**
 * Federation: remote A2A agents as sub-agents of the orchestrator. The
 * composition root creates one {@link createFederation} per node; the A2A
 * executor calls {@link checkInboundHops} on every inbound message.
 */
export { createFederation, type Federation, type FederationOptions, type FederationListener } from './federation';
export { loadRemoteAgents, type LoadRemoteAgentsOptions, type LoadedRemoteAgents } from './loadRemoteAgents';
export { createRemoteAgent, type RemoteAgentOptions, type CallReport } from './remoteAgent';
export { DEFAULT_PEER_LIMITS, type PeerLimits } from './peerFetch';
export { createPeerNetwork, type PeerNetwork } from './outbound';
export {
  createOnBehalfOf,
  type OnBehalfOf,
  type OnBehalfOfOptions,
  type TokenExchangeGrant,
  type DelegationCheck,
} from './onBehalfOf';
export {
  DEFAULT_CIRCUIT,
  DEFAULT_PROBE_INTERVAL_MS,
  PEER_STATES,
  unavailableReason,
  type PeerState,
  type PeerStatus,
  type PeerProbe,
  type CircuitOptions,
} from './health';
export { DEFAULT_CARD_TIMEOUT_MS, DEFAULT_MAX_CARD_BYTES, type SecretResolver, type PeerSkip } from './loader';
export type { VerifyCardsMode } from './cardVerify';
export {
  checkInboundHops,
  nextHop,
  readHopState,
  resolveNodeId,
  type NodeId,
  FEDERATION_PATH_KEY,
  FEDERATION_HOPS_KEY,
  type HopCheck,
} from './hops';
