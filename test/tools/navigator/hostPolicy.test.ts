import { ConfigError } from '../../../src/errors';
import { createHostPolicy, isPrivateAddress, type LookupFn } from '../../../src/tools/navigator/hostPolicy';

/** A resolver with fixed answers, so names can point anywhere without a network. */
function fixedLookup(table: Record<string, string[]>): LookupFn {
  return async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const lookup = fixedLookup({
  'example.com': ['93.184.215.14'],
  'docs.example.com': ['93.184.215.20'],
  'rebind.example.net': ['10.1.2.3'],
  'mixed.example.net': ['93.184.215.30', '192.168.1.5'],
  'intranet.corp': ['10.0.0.7'],
});

describe('host policy', () => {
  it('allows a public host when allow is empty and pins the resolved address', async () => {
    const policy = createHostPolicy({ allow: [], deny: [], lookup });
    await expect(policy.checkUrl('https://example.com/path')).resolves.toEqual({
      ok: true,
      address: '93.184.215.14',
      family: 4,
    });
  });

  it('refuses a host matching a deny glob, before resolving it', async () => {
    const policy = createHostPolicy({ allow: [], deny: ['*.example.com'], lookup });
    const decision = await policy.checkUrl('http://docs.example.com/');
    expect(decision).toEqual({
      ok: false,
      reason: 'host docs.example.com is denied by tools.browser.deny ("*.example.com")',
    });
    await expect(policy.checkUrl('http://example.com/')).resolves.toMatchObject({ ok: true });
  });

  it('refuses loopback and private addresses unless allowed', async () => {
    const policy = createHostPolicy({ allow: [], deny: [], lookup });
    for (const url of ['http://127.0.0.1:8080/', 'http://[::1]/', 'http://10.0.0.1/', 'http://169.254.169.254/']) {
      const decision = await policy.checkUrl(url);
      expect(decision.ok).toBe(false);
      expect(!decision.ok && decision.reason).toMatch(
        /is an? (loopback|private|link-local) address .*not public; open it with tools.browser.allow/,
      );
    }
  });

  it('refuses a public name that resolves to a private address', async () => {
    const policy = createHostPolicy({ allow: [], deny: [], lookup });
    await expect(policy.checkUrl('http://rebind.example.net/')).resolves.toEqual({
      ok: false,
      reason:
        'rebind.example.net resolves to 10.1.2.3, a private address (10.0.0.0/8), not public; ' +
        'open it with tools.browser.allow',
    });
    await expect(policy.checkUrl('http://mixed.example.net/')).resolves.toMatchObject({ ok: false });
  });

  it('allows a loopback address named in allow, but not through the catch-all *', async () => {
    const explicit = createHostPolicy({ allow: ['127.0.0.1'], deny: [], lookup });
    await expect(explicit.checkUrl('http://127.0.0.1:3000/')).resolves.toMatchObject({
      ok: true,
      address: '127.0.0.1',
    });
    const catchAll = createHostPolicy({ allow: ['*'], deny: [], lookup });
    await expect(catchAll.checkUrl('http://127.0.0.1:3000/')).resolves.toMatchObject({ ok: false });
    await expect(catchAll.checkUrl('http://example.com/')).resolves.toMatchObject({ ok: true });
  });

  it('treats a non-empty allow as the only hosts reachable', async () => {
    const policy = createHostPolicy({ allow: ['example.com'], deny: [], lookup });
    await expect(policy.checkUrl('http://example.com/')).resolves.toMatchObject({ ok: true });
    await expect(policy.checkUrl('http://docs.example.com/')).resolves.toEqual({
      ok: false,
      reason: 'host docs.example.com is not in tools.browser.allow',
    });
  });

  it('allows private networks by CIDR and denies addresses by CIDR', async () => {
    const allowed = createHostPolicy({ allow: ['10.0.0.0/8'], deny: [], lookup });
    await expect(allowed.checkUrl('http://intranet.corp/')).resolves.toMatchObject({ ok: true, address: '10.0.0.7' });
    const denied = createHostPolicy({ allow: [], deny: ['93.184.215.0/24'], lookup });
    await expect(denied.checkUrl('http://example.com/')).resolves.toMatchObject({
      ok: false,
      reason: 'host example.com (93.184.215.14) is denied by tools.browser.deny ("93.184.215.0/24")',
    });
  });

  it('sees through numeric spellings of loopback that the URL parser normalises', async () => {
    const policy = createHostPolicy({ allow: [], deny: [], lookup });
    for (const url of [
      'http://2130706433/',
      'http://0x7f.1/',
      'http://127.1/',
      'http://0/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::127.0.0.1]/',
    ]) {
      await expect(policy.checkUrl(url)).resolves.toMatchObject({ ok: false });
    }
    const allowed = createHostPolicy({ allow: ['127.0.0.1'], deny: [], lookup });
    await expect(allowed.checkUrl('http://[::ffff:127.0.0.1]:8080/')).resolves.toMatchObject({ ok: true });
  });

  it('judges IPv4-mapped IPv6 addresses as the IPv4 address they carry', () => {
    expect(isPrivateAddress('::ffff:127.0.0.1')).toBe(true);
    expect(isPrivateAddress('::ffff:8.8.8.8')).toBe(false);
    expect(isPrivateAddress('fd00::1')).toBe(true);
    expect(isPrivateAddress('2606:4700::1111')).toBe(false);
  });

  it('refuses schemes other than http and https, and unresolvable hosts, with the reason', async () => {
    const policy = createHostPolicy({ allow: [], deny: [], lookup });
    await expect(policy.checkUrl('file:///etc/passwd')).resolves.toEqual({
      ok: false,
      reason: 'only http and https URLs can be browsed, not file:',
    });
    await expect(policy.checkUrl('not a url')).resolves.toEqual({
      ok: false,
      reason: '"not a url" is not an absolute URL',
    });
    await expect(policy.checkUrl('http://nowhere.invalid/')).resolves.toEqual({
      ok: false,
      reason: 'cannot resolve host nowhere.invalid: getaddrinfo ENOTFOUND nowhere.invalid',
    });
  });

  it('gives up on a resolver that hangs', async () => {
    const policy = createHostPolicy({ allow: [], deny: [], lookup: () => new Promise(() => {}), lookupTimeoutMs: 50 });
    await expect(policy.checkHost('slow.example')).resolves.toEqual({
      ok: false,
      reason: 'cannot resolve host slow.example: resolving slow.example timed out after 50 ms',
    });
  });

  it('rejects a malformed CIDR in the configuration', () => {
    expect(() => createHostPolicy({ allow: ['10.0.0.0/99'], deny: [] })).toThrow(ConfigError);
  });
});
