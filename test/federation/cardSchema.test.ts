import fs from 'node:fs';
import path from 'node:path';
import { A2A_PROTOCOL_VERSION } from '@a2a-js/sdk';
import type { AgentCard } from '@a2a-js/sdk';
import { AgentCardV1, detectCardVersion, parseAgentCard } from '../../src/protocol/cardSchema';

const sdkCard: AgentCard = {
  name: 'Peer',
  description: 'A peer',
  supportedInterfaces: [
    { url: 'http://127.0.0.1:9/', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
  ],
  provider: undefined,
  version: '1.0.0',
  documentationUrl: '',
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {
    bearer: {
      scheme: { $case: 'httpAuthSecurityScheme', value: { description: '', scheme: 'Bearer', bearerFormat: '' } },
    },
  },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }],
  defaultInputModes: ['text'],
  defaultOutputModes: ['text'],
  skills: [
    {
      id: 'echo',
      name: 'Echo',
      description: 'Replies',
      tags: ['echo'],
      examples: ['say hi'],
      inputModes: ['text'],
      outputModes: ['text'],
      securityRequirements: [],
    },
  ],
  signatures: [],
};

const v03Card = {
  name: 'Legacy',
  description: 'A v0.3 peer',
  url: 'http://127.0.0.1:9/',
  protocolVersion: '0.3.0',
  version: '0.1.0',
  capabilities: { streaming: false },
  defaultInputModes: ['text'],
  defaultOutputModes: ['text'],
  skills: [{ id: 'x', name: 'X', description: 'does x', tags: ['x'] }],
};

describe('agent card schema', () => {
  it('accepts the SDK 1.3 in-memory card and its JSON form as v1.0', () => {
    expect(AgentCardV1.safeParse(sdkCard).success).toBe(true);
    const parsed = parseAgentCard(JSON.parse(JSON.stringify(sdkCard)));
    expect(parsed.ok && parsed.version).toBe('1.0');
  });

  it('accepts a ProtoJSON card with omitted empty lists and oneof security schemes', () => {
    const parsed = parseAgentCard({
      name: 'P',
      description: '',
      version: '1',
      supportedInterfaces: [{ url: 'http://h/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      securitySchemes: { b: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
    });
    expect(parsed.ok).toBe(true);
    if (parsed.ok && parsed.version === '1.0') expect(parsed.card.skills).toEqual([]);
  });

  it('accepts a v0.3 card and fills the v0.3 defaults', () => {
    const parsed = parseAgentCard(v03Card);
    expect(parsed.ok).toBe(true);
    if (parsed.ok && parsed.version === '0.3') {
      expect(parsed.card.preferredTransport).toBe('JSONRPC');
      expect(parsed.card.skills[0].examples).toEqual([]);
    }
  });

  it('rejects a card without interfaces or url, naming the problem', () => {
    expect(detectCardVersion({ name: 'x' })).toBeUndefined();
    const parsed = parseAgentCard({ name: 'x', description: 'y' });
    expect(parsed).toEqual({ ok: false, issues: [expect.stringContaining('not an agent card')] });
  });

  it('rejects wrong field types with the field path in the issue', () => {
    const parsed = parseAgentCard({ ...sdkCard, name: 42 });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues[0]).toMatch(/^name: /);
    const empty = parseAgentCard({ ...sdkCard, supportedInterfaces: [] });
    expect(empty.ok).toBe(false);
  });

  it('rejects oversized fields instead of carrying them into prompts', () => {
    const parsed = parseAgentCard({ ...v03Card, description: 'x'.repeat(20_000) });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues[0]).toMatch(/^description: /);
  });
});

describe('the cards shipped in agent-cards/', () => {
  const dir = path.join(__dirname, '..', '..', 'agent-cards');
  it.each(fs.readdirSync(dir).filter((f) => f.endsWith('.json')))('%s validates as an agent card', (file) => {
    const parsed = parseAgentCard(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));
    expect(parsed).toMatchObject({ ok: true });
  });
});
