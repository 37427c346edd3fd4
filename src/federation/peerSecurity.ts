import type { AgentCard, SecurityScheme } from '@a2a-js/sdk';
import type { RemoteAgentEntry } from '../config/schema';

/**
 * What a remote agent's card asks of its callers (`securitySchemes` and
 * `securityRequirements`, A2A §7.3) and whether the entry's configuration
 * gives it, for `lango agents --check` and `/agents` (issue 26). Read from
 * the card as loaded; nothing is sent to find out.
 */

/** The card's requirements in words, and whether the entry meets one of them. */
export interface PeerSecurity {
  /** `none`, or the alternatives the card accepts (`oauth2 client credentials (…) or mtls`). */
  requires: string;
  satisfied: boolean;
  /** How the entry meets it, or what it lacks. */
  note: string;
}

/** One scheme of the card, judged against the entry. */
interface Judged {
  words: string;
  /** What the entry lacks; undefined when it gives the scheme. */
  lack?: string;
  how?: string;
}

/**
 * @example
 * describePeerSecurity(peer.sdkCard, entry);
 * // { requires: 'oauth2 client credentials (token https://idp.example/token)', satisfied: true, note: 'auth.type oauth2' }
 */
export function describePeerSecurity(card: AgentCard, entry: RemoteAgentEntry): PeerSecurity {
  const schemes = card.securitySchemes ?? {};
  const names = Object.keys(schemes);
  if (names.length === 0) return { requires: 'none', satisfied: true, note: 'the card declares no security scheme' };
  // No requirement listed: each declared scheme is taken as a way in of its own.
  const alternatives = (card.securityRequirements ?? []).map((r) => Object.entries(r.schemes ?? {}));
  const ways: [string, { list: string[] } | undefined][][] =
    alternatives.length > 0 ? alternatives : names.map((name) => [[name, { list: [] }]]);
  const judged = ways.map((way) =>
    way.map(([name, scopes]) => {
      const scheme = schemes[name];
      return scheme
        ? judge(scheme, entry, scopes?.list ?? [])
        : { words: name, lack: `the card requires "${name}" but does not declare it` };
    }),
  );
  const requires = judged.map((way) => way.map((j) => j.words).join(' and ')).join(' or ');
  const met = judged.find((way) => way.every((j) => !j.lack));
  if (met) return { requires, satisfied: true, note: met.map((j) => j.how).join(', ') };
  const lacks = [...new Set(judged.flatMap((way) => way.flatMap((j) => (j.lack ? [j.lack] : []))))];
  return { requires, satisfied: false, note: lacks.join('; ') };
}

function judge(scheme: SecurityScheme, entry: RemoteAgentEntry, scopes: readonly string[]): Judged {
  const auth = entry.auth;
  const value = scheme.scheme;
  switch (value?.$case) {
    case 'httpAuthSecurityScheme': {
      const kind = value.value.scheme || 'Bearer';
      if (/^bearer$/i.test(kind)) {
        if (auth?.type === 'bearer') return { words: 'a bearer token', how: 'auth.type bearer' };
        if (auth?.type === 'oauth2') return { words: 'a bearer token', how: 'auth.type oauth2 (its token)' };
        if (auth?.type === 'tokenExchange')
          return { words: 'a bearer token', how: "auth.type tokenExchange (each caller's token, exchanged)" };
        return { words: 'a bearer token', lack: 'no auth of type bearer, oauth2 or tokenExchange' };
      }
      const header = Object.keys(entry.headers ?? {}).some((h) => h.toLowerCase() === 'authorization');
      return header
        ? { words: `HTTP ${kind}`, how: 'headers.Authorization' }
        : { words: `HTTP ${kind}`, lack: `no Authorization header for HTTP ${kind}` };
    }
    case 'apiKeySecurityScheme': {
      const { location, name } = value.value;
      const words = `an API key in ${location || 'header'} ${name}`;
      if (location && location !== 'header') return { words, lack: `an API key in the ${location} is not supported` };
      const given =
        (auth?.type === 'apiKey' && auth.header.toLowerCase() === name.toLowerCase()) ||
        Object.keys(entry.headers ?? {}).some((h) => h.toLowerCase() === name.toLowerCase());
      return given ? { words, how: `the ${name} header` } : { words, lack: `no ${name} header (auth.type apiKey)` };
    }
    case 'oauth2SecurityScheme': {
      const flow = value.value.flows?.flow;
      if (flow?.$case !== 'clientCredentials') {
        const words = `oauth2 ${flow?.$case ?? 'without a flow'}`;
        if (auth?.type === 'bearer')
          return { words, how: 'auth.type bearer (a token obtained by hand: it will expire)' };
        return { words, lack: `the ${flow?.$case ?? 'unnamed'} flow needs a user; configure a bearer token` };
      }
      const words = `oauth2 client credentials (token ${flow.value.tokenUrl}${scopes.length ? `, scopes ${scopes.join(' ')}` : ''})`;
      if (auth?.type === 'bearer') return { words, how: 'auth.type bearer (a static token: it will expire)' };
      if (auth?.type === 'tokenExchange') return { words, how: 'auth.type tokenExchange (exchanged at its tokenUrl)' };
      if (auth?.type !== 'oauth2') return { words, lack: 'no auth of type oauth2' };
      const missing = scopes.filter((s) => !auth.scopes.includes(s));
      if (missing.length > 0) return { words, lack: `auth.scopes lacks ${missing.join(' ')}` };
      const elsewhere = flow.value.tokenUrl && flow.value.tokenUrl !== auth.tokenUrl;
      return { words, how: `auth.type oauth2${elsewhere ? ` (its tokenUrl is not the card's)` : ''}` };
    }
    case 'openIdConnectSecurityScheme': {
      const words = `OpenID Connect (${value.value.openIdConnectUrl})`;
      if (auth?.type === 'oauth2') return { words, how: 'auth.type oauth2' };
      if (auth?.type === 'tokenExchange') return { words, how: 'auth.type tokenExchange' };
      if (auth?.type === 'bearer') return { words, how: 'auth.type bearer (a static token: it will expire)' };
      return { words, lack: 'no auth of type oauth2, tokenExchange or bearer' };
    }
    case 'mtlsSecurityScheme':
      return entry.tls?.cert
        ? { words: 'a client certificate (mtls)', how: 'tls.cert' }
        : { words: 'a client certificate (mtls)', lack: 'no tls.cert and tls.key' };
    default:
      return { words: 'an unknown scheme', lack: 'the card declares a scheme this node does not know' };
  }
}
