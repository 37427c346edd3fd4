/**
 * The node's one outbound address policy (issue 11, D): canonical address
 * parsing and classification, the policy that judges hosts, the pinned
 * dispatcher every outbound request goes through, and bounded body reads.
 */
export { parseIp, formatIp, parseCidr, cidrContains, unmapIPv4, type IpAddress, type Cidr } from './address';
export { classifyAddress, scopePhrase, type AddressClass, type AddressScope } from './ranges';
export { parseHost, isLoopbackHost, isLocalhostName, type ParsedHost } from './host';
export {
  createOutboundPolicy,
  systemLookup,
  hostGlob,
  OutboundRefusedError,
  type OutboundPolicy,
  type OutboundPolicyOptions,
  type OutboundDecision,
  type Lookup,
  type ResolvedAddress,
} from './policy';
export {
  createPinnedAgent,
  createOutboundFetch,
  type PinnedAgentOptions,
  type OutboundFetchOptions,
} from './dispatcher';
export { readBody, discardBody, quietBody, decodedBody, BodyTooLargeError } from './body';
export { createEndpointFetch, type EndpointFetchOptions } from './endpoint';
