import { AgentCard } from '@a2a-js/sdk';
import { createJsonRpcPeerClient } from '../../src/federation/jsonRpcPeer';
import { peerClientChoice } from '../../src/federation/peerClient';
import { createPeerExchange, createPeerFetch } from '../../src/federation/peerFetch';
import { createPeerClient } from '../../src/federation/remoteClient';
import { peerClientContract } from './contracts/peerClient.contract';

/**
 * One outbound client choice (`peerClient.ts`) and one contract for both
 * clients it chooses between: the lean v1.0 JSON-RPC client and the SDK's,
 * each run through `contracts/peerClient.contract.ts` against real SDK peers
 * (the SDK's against v0.3 peers too, which only it serves).
 */

const card = (interfaces: Array<Record<string, string>>) =>
  AgentCard.fromJSON({ name: 'p', description: 'p', version: '1', supportedInterfaces: interfaces });

describe('which client a peer gets', () => {
  it('is the lean one only where the SDK factory would take v1.0 JSON-RPC without a tenant', () => {
    const rpc10 = { url: 'http://a/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' };
    const rpc03 = { url: 'http://a/v03', protocolBinding: 'JSONRPC', protocolVersion: '0.3' };
    const rest10 = { url: 'http://a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' };
    const grpc = { url: 'http://a/g', protocolBinding: 'GRPC', protocolVersion: '1.0' };
    expect(peerClientChoice(card([rpc10]))).toEqual({ kind: 'lean', endpoint: 'http://a/rpc' });
    expect(peerClientChoice(card([rpc03, rpc10]))).toEqual({ kind: 'lean', endpoint: 'http://a/rpc' });
    expect(peerClientChoice(card([grpc, rpc10]))).toEqual({ kind: 'lean', endpoint: 'http://a/rpc' });
    expect(peerClientChoice(card([rpc03]))).toEqual({ kind: 'sdk' });
    expect(peerClientChoice(card([rest10, rpc10]))).toEqual({ kind: 'sdk' });
    expect(peerClientChoice(card([{ ...rpc10, tenant: 't1' }]))).toEqual({ kind: 'sdk' });
  });
});

peerClientContract({
  name: 'the lean v1.0 JSON-RPC client',
  versions: ['1.0'],
  make: async (peerCard, transport, polling) => {
    const choice = peerClientChoice(peerCard);
    if (choice.kind !== 'lean') throw new Error('the lean client serves v1.0 JSON-RPC cards only');
    return createJsonRpcPeerClient({ endpoint: choice.endpoint, exchange: createPeerExchange(transport), polling });
  },
});

peerClientContract({
  name: 'the SDK client',
  versions: ['1.0', '0.3'],
  make: (peerCard, transport, polling) =>
    createPeerClient(peerCard, { fetchImpl: createPeerFetch(transport), polling }),
});
