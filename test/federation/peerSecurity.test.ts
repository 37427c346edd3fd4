import type { AgentCard, SecurityScheme } from '@a2a-js/sdk';
import { describePeerSecurity } from '../../src/federation/peerSecurity';
import { entries } from '../support/federationRun';

/**
 * `lango agents --check`'s reading of a remote card's security (issue 26):
 * what the card asks of its callers, and whether the entry gives it.
 */

const card = (
  securitySchemes: Record<string, SecurityScheme>,
  securityRequirements: AgentCard['securityRequirements'] = [],
) => ({ securitySchemes, securityRequirements }) as unknown as AgentCard;
const entry = (fields: Record<string, unknown> = {}) =>
  entries({ name: 'peer', baseUrl: 'https://peer.example', ...fields })[0];

const oauth2: SecurityScheme = {
  scheme: {
    $case: 'oauth2SecurityScheme',
    value: {
      description: '',
      oauth2MetadataUrl: '',
      flows: {
        flow: {
          $case: 'clientCredentials',
          value: { tokenUrl: 'https://idp.example/token', refreshUrl: '', scopes: { 'a2a:call': 'call' } },
        },
      },
    },
  },
};
const mtls: SecurityScheme = { scheme: { $case: 'mtlsSecurityScheme', value: { description: '' } } };
const apiKey: SecurityScheme = {
  scheme: { $case: 'apiKeySecurityScheme', value: { description: '', location: 'header', name: 'X-Peer-Key' } },
};
const oauth2Entry = (scopes: string[]) =>
  entry({
    auth: {
      type: 'oauth2',
      tokenUrl: 'https://idp.example/token',
      clientId: 'me',
      clientSecret: '{{secret:PEER_SECRET}}',
      scopes,
    },
  });

describe("a remote card's security against the entry", () => {
  it('says a card without schemes asks for nothing', () => {
    expect(describePeerSecurity(card({}), entry())).toMatchObject({ requires: 'none', satisfied: true });
  });

  it('names the token URL and scopes of client credentials, and the scopes the entry lacks', () => {
    const required = card({ oauth: oauth2 }, [{ schemes: { oauth: { list: ['a2a:call'] } } }]);
    expect(describePeerSecurity(required, oauth2Entry(['a2a:call']))).toEqual({
      requires: 'oauth2 client credentials (token https://idp.example/token, scopes a2a:call)',
      satisfied: true,
      note: 'auth.type oauth2',
    });
    expect(describePeerSecurity(required, oauth2Entry([]))).toMatchObject({
      satisfied: false,
      note: 'auth.scopes lacks a2a:call',
    });
    expect(describePeerSecurity(required, entry())).toMatchObject({ satisfied: false, note: 'no auth of type oauth2' });
  });

  it('needs every scheme of a requirement, and one requirement of several', () => {
    const both = card({ oauth: oauth2, mtls, key: apiKey }, [
      { schemes: { oauth: { list: [] }, mtls: { list: [] } } },
      { schemes: { key: { list: [] } } },
    ]);
    const withoutCert = describePeerSecurity(both, oauth2Entry([]));
    expect(withoutCert.requires).toBe(
      'oauth2 client credentials (token https://idp.example/token) and a client certificate (mtls) or an API key in header X-Peer-Key',
    );
    expect(withoutCert).toMatchObject({
      satisfied: false,
      note: 'no tls.cert and tls.key; no X-Peer-Key header (auth.type apiKey)',
    });
    const withCert = oauth2Entry([]);
    withCert.tls = { cert: '/etc/lango/me.crt', key: '/etc/lango/me.key' };
    expect(describePeerSecurity(both, withCert)).toMatchObject({ satisfied: true, note: 'auth.type oauth2, tls.cert' });
    expect(
      describePeerSecurity(both, entry({ auth: { type: 'apiKey', header: 'x-peer-key', key: 'k' } })),
    ).toMatchObject({ satisfied: true, note: 'the X-Peer-Key header' });
  });

  it('takes each declared scheme as a way in when the card lists no requirement', () => {
    expect(describePeerSecurity(card({ mtls, key: apiKey }), entry({ headers: { 'X-Peer-Key': 'k' } }))).toMatchObject({
      requires: 'a client certificate (mtls) or an API key in header X-Peer-Key',
      satisfied: true,
    });
  });
});
