import { generateKeyPairSync } from 'node:crypto';
import { AgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';
import { AgentCardV03, AgentCardV1, parseAgentCard } from '../../src/protocol/cardSchema';
import { a2aTestPeer, a2aTestTools, startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { buildAgentTree } from '../../src/orchestration/tree';
import type { LlmAgent } from '../../src/agent/agent';

/** A response body as JSON (fetch types it `unknown`). */
const json = (response: Response): Promise<any> => response.json();

const getCard = (
  url: string,
  path = '/.well-known/agent-card.json',
  headers: Record<string, string> = { 'A2A-Version': '1.0' },
) => fetch(`${url}${path}`, { headers });

describe('the agent card', () => {
  let node: A2ATestNode;
  beforeAll(async () => {
    node = await startA2ANode();
  });
  afterAll(() => node.close());

  it('has one orchestration skill and one skill per sub-agent, the remote peer included', async () => {
    const card = await json(await getCard(node.url));
    const skills = card.skills as { id: string; tags: string[]; description: string }[];
    expect(skills[0]).toMatchObject({ id: 'lango-orchestrator', tags: expect.arrayContaining(['orchestration']) });
    const subs = skills.slice(1).map((s) => s.id);
    // Specialists with no tools are not built (the planner always is); spec order, remote peers last.
    expect(subs).toEqual(['operator', 'vault', 'planner', 'peer']);
    for (const skill of skills.slice(1)) expect(skill.tags).toContain('sub_agent:lango-orchestrator');
    expect(skills.find((s) => s.id === 'peer')?.tags).toContain('remote');
    expect(skills.find((s) => s.id === 'operator')?.description).toMatch(
      /Capabilities: command execution, file operations/,
    );
  });

  it('never shows instructions, prompts or raw tool names', async () => {
    const text = await (await getCard(node.url)).text();
    expect(text).not.toContain('SECRET ORCHESTRATOR PROMPT');
    for (const tool of ['exec_shell', 'fs_read', 'secrets_get']) expect(text).not.toContain(tool);
  });

  it('declares JSON-RPC and HTTP+JSON at the base URL, for v1.0 and v0.3, and passes the card schema', async () => {
    const raw = await json(await getCard(node.url));
    const parsed = parseAgentCard(raw);
    expect(parsed).toMatchObject({ ok: true, version: '1.0' });
    expect(AgentCardV1.safeParse(raw).success).toBe(true);
    expect(raw.supportedInterfaces).toEqual(
      expect.arrayContaining([
        { url: node.url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: node.url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        { url: node.url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ]),
    );
    expect(raw.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
  });

  it('serves the v0.3 form at /.well-known/agent.json and to header-less requests', async () => {
    for (const path of ['/.well-known/agent.json', '/.well-known/agent-card.json']) {
      const raw = await json(await getCard(node.url, path, {}));
      expect(AgentCardV03.safeParse(raw).success).toBe(true);
      expect(raw).toMatchObject({
        url: node.url,
        preferredTransport: 'JSONRPC',
        protocolVersion: expect.stringMatching(/^0\.3/),
      });
    }
  });

  it('is the same card the server hands to `lango card`', async () => {
    expect(await node.a2a.card()).toEqual(await json(await getCard(node.url)));
  });

  it('sends an ETag and Cache-Control, and answers 304 to a matching If-None-Match', async () => {
    const first = await getCard(node.url);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^W\/"[0-9a-f]{16}"$/);
    expect(first.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const again = await getCard(node.url, '/.well-known/agent-card.json', {
      'A2A-Version': '1.0',
      'If-None-Match': etag!,
    });
    expect(again.status).toBe(304);
  });

  it('answers the same v1.0 card on the fast path (GET, A2A-Version 1.0) and through the routes (HEAD, a query)', async () => {
    const fast = await getCard(node.url, '/.well-known/agent-card.json', { 'A2A-Version': '1.0' });
    const routed = await getCard(node.url, '/.well-known/agent-card.json?fresh=1', { 'A2A-Version': '1.0' });
    expect(await fast.text()).toBe(await routed.text());
    for (const name of ['content-type', 'content-length', 'etag', 'cache-control', 'vary'])
      expect([name, fast.headers.get(name)]).toEqual([name, routed.headers.get(name)]);
    const head = await fetch(`${node.url}/.well-known/agent-card.json`, {
      method: 'HEAD',
      headers: { 'A2A-Version': '1.0' },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(fast.headers.get('etag'));
  });
});

describe('the card follows the tree and the configuration', () => {
  it('changes (with a new ETag) when the tree is rebuilt with another peer', async () => {
    let root: LlmAgent = buildAgentTree({ tools: a2aTestTools(), remoteAgents: [] });
    const node = await startA2ANode({ root: () => root });
    try {
      const before = await getCard(node.url);
      expect((await json(before)).skills.map((s: { id: string }) => s.id)).not.toContain('peer');
      root = buildAgentTree({ tools: a2aTestTools(), remoteAgents: [a2aTestPeer()] });
      const after = await getCard(node.url);
      expect((await json(after)).skills.map((s: { id: string }) => s.id)).toContain('peer');
      expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    } finally {
      await node.close();
    }
  });

  it('declares security schemes as ProtoJSON when auth is configured, and uses a2a.agentName and a2a.baseUrl', async () => {
    const node = await startA2ANode({
      config: {
        a2a: {
          agentName: 'edge-node',
          baseUrl: 'https://edge.example.com/a2a',
          auth: { bearerTokens: ['t0ken-one'], apiKeys: ['k3y-one'], apiKeyHeader: 'X-Lango-Key' },
        },
      },
    });
    try {
      const raw = await json(await getCard(node.url));
      expect(raw.name).toBe('edge-node');
      expect(raw.supportedInterfaces[0].url).toBe('https://edge.example.com/a2a');
      expect(raw.securitySchemes).toEqual({
        bearer: { httpAuthSecurityScheme: { description: expect.any(String), scheme: 'Bearer' } },
        apiKey: { apiKeySecurityScheme: { description: expect.any(String), location: 'header', name: 'X-Lango-Key' } },
      });
      expect(raw.securityRequirements).toEqual([{ schemes: { bearer: {} } }, { schemes: { apiKey: {} } }]);
      expect(raw.capabilities.extendedAgentCard).toBe(true);
      expect(JSON.stringify(raw)).not.toMatch(/t0ken-one|k3y-one/);
      expect(AgentCardV1.safeParse(raw).success).toBe(true);
      const legacy = await json(await getCard(node.url, '/.well-known/agent.json', {}));
      expect(legacy.securitySchemes).toMatchObject({
        bearer: { type: 'http', scheme: 'Bearer' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Lango-Key' },
      });
      expect(legacy.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
      expect(legacy.supportsAuthenticatedExtendedCard).toBe(true);
      expect(AgentCardV03.safeParse(legacy).success).toBe(true);
    } finally {
      await node.close();
    }
  });

  it('is signed (JWS) with a2a.signingKey, and the signature verifies against the public key', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const node = await startA2ANode({ config: { a2a: { signingKey: pem } } });
    try {
      const raw = await json(await getCard(node.url));
      expect(raw.signatures).toHaveLength(1);
      const card = AgentCard.fromJSON(raw);
      await expect(verifyAgentCardSignature(async () => publicKey)(card)).resolves.toBeUndefined();
      const tampered = AgentCard.fromJSON({ ...raw, name: 'impostor' });
      await expect(verifyAgentCardSignature(async () => publicKey)(tampered)).rejects.toThrow();
      expect(JSON.stringify(raw)).not.toContain('PRIVATE KEY');
    } finally {
      await node.close();
    }
  });
});
