import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { assertSafeExposure } from '../../src/identity/identity';
import { LangoConfig } from '../../src/config/schema';
import { ConfigError } from '../../src/errors';
import {
  createOutboundPolicy,
  createPinnedAgent,
  isLoopbackHost,
  OutboundRefusedError,
  type Lookup,
} from '../../src/net';

/**
 * Issue 11 D: one outbound address policy. Every spelling below goes
 * through the same policy the node uses for every request (no openings:
 * the default for webhooks and for peers named by host name); the verdict
 * must not depend on how the address is written.
 */

type Verdict = 'refused' | 'allowed';

/** Names the injected resolver knows (no real DNS in tests). */
const DNS: Record<string, string[]> = {
  '127.example.com': ['93.184.215.14'],
  'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'rebind.example': ['10.0.0.1'],
  'mixed.example': ['8.8.8.8', '127.0.0.1'],
  'mapped.example': ['::ffff:169.254.169.254'],
  'nat64.example': ['64:ff9b::a9fe:a9fe'],
};
const lookup: Lookup = async (name) => {
  const answers = DNS[name];
  if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
  return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const SPELLINGS: Array<[string, Verdict, string]> = [
  // IPv4 loopback, every notation inet_aton and the URL parser accept
  ['127.0.0.1', 'refused', 'loopback'],
  ['127.1', 'refused', 'loopback'],
  ['127.0.1', 'refused', 'loopback'],
  ['0x7f.1', 'refused', 'loopback'],
  ['0X7F.1', 'refused', 'loopback'],
  ['0x7f000001', 'refused', 'loopback'],
  ['2130706433', 'refused', 'loopback'],
  ['017700000001', 'refused', 'loopback'],
  ['0177.0.0.1', 'refused', 'loopback'],
  ['0177.0.0.01', 'refused', 'loopback'],
  ['00000177.0.0.1', 'refused', 'loopback'],
  ['0x7f.0x0.0x0.0x1', 'refused', 'loopback'],
  ['127.0.0.1.', 'refused', 'loopback'],
  ['127.255.255.254', 'refused', 'loopback'],
  // unspecified: connecting to it reaches this machine on Linux
  ['0.0.0.0', 'refused', 'unspecified'],
  ['0', 'refused', 'unspecified'],
  ['0x0', 'refused', 'unspecified'],
  ['[::]', 'refused', 'unspecified'],
  // private networks
  ['10.0.0.1', 'refused', 'private'],
  ['10.1', 'refused', 'private'],
  ['167772161', 'refused', 'private'],
  ['172.16.0.1', 'refused', 'private'],
  ['172.31.255.255', 'refused', 'private'],
  ['192.168.1.1', 'refused', 'private'],
  ['0xc0a80101', 'refused', 'private'],
  ['100.64.0.1', 'refused', 'private'],
  // link-local and the cloud metadata address
  ['169.254.169.254', 'refused', 'link-local'],
  ['0xa9fea9fe', 'refused', 'link-local'],
  ['2852039166', 'refused', 'link-local'],
  ['0251.0376.0251.0376', 'refused', 'link-local'],
  ['169.254.43518', 'refused', 'link-local'],
  ['[::ffff:169.254.169.254]', 'refused', 'link-local'],
  ['[::ffff:a9fe:a9fe]', 'refused', 'link-local'],
  ['[fe80::1]', 'refused', 'link-local'],
  ['fe80::1%eth0', 'refused', 'link-local'],
  // IPv6 loopback and the IPv6 forms that carry an IPv4 loopback
  ['[::1]', 'refused', 'loopback'],
  ['[0:0:0:0:0:0:0:1]', 'refused', 'loopback'],
  ['[::ffff:127.0.0.1]', 'refused', 'loopback'],
  ['[::ffff:7f00:1]', 'refused', 'loopback'],
  ['[0:0:0:0:0:ffff:7f00:1]', 'refused', 'loopback'],
  ['[::FFFF:7F00:0001]', 'refused', 'loopback'],
  ['[::ffff:0:7f00:1]', 'refused', 'loopback'],
  ['[::127.0.0.1]', 'refused', 'loopback'],
  ['[::7f00:1]', 'refused', 'loopback'],
  ['[64:ff9b::127.0.0.1]', 'refused', 'loopback'],
  ['[64:ff9b::a9fe:a9fe]', 'refused', 'link-local'],
  ['[64:ff9b::10.0.0.1]', 'refused', 'private'],
  ['[64:ff9b:1::1]', 'refused', 'private'],
  ['[2002:7f00:1::]', 'refused', 'loopback'],
  ['[2002:a9fe:a9fe::1]', 'refused', 'link-local'],
  ['[2002:c0a8:101::1]', 'refused', 'private'],
  ['[2001:0:4136:e378:8000:63bf:80ff:fffe]', 'refused', 'loopback'],
  // other non-public IPv6 and IPv4 space
  ['[fd00::1]', 'refused', 'private'],
  ['[fc00::1]', 'refused', 'private'],
  ['[fec0::1]', 'refused', 'private'],
  ['[ff02::1]', 'refused', 'multicast'],
  ['224.0.0.1', 'refused', 'multicast'],
  ['255.255.255.255', 'refused', 'reserved'],
  ['240.0.0.1', 'refused', 'reserved'],
  ['192.0.2.1', 'refused', 'reserved'],
  ['198.18.0.1', 'refused', 'reserved'],
  ['[2001:db8::1]', 'refused', 'reserved'],
  ['[100::1]', 'refused', 'reserved'],
  ['[1::1]', 'refused', 'reserved'],
  // local names never go to DNS
  ['localhost', 'refused', 'loopback'],
  ['LOCALHOST.', 'refused', 'loopback'],
  ['api.localhost', 'refused', 'loopback'],
  // malformed numeric hosts are refused, not handed to a resolver
  ['1.2.3.256', 'refused', 'not an IPv4'],
  ['127.0.0.1.5', 'refused', 'not an IPv4'],
  ['08.0.0.1', 'refused', 'not an IPv4'],
  ['0x100000000', 'refused', 'not an IPv4'],
  ['example.0x10', 'refused', 'not an IPv4'],
  ['[::ffff:127.0.0.256]', 'refused', 'not a valid IPv6'],
  // names: judged by what they resolve to
  ['rebind.example', 'refused', 'private'],
  ['mixed.example', 'refused', 'loopback'],
  ['mapped.example', 'refused', 'link-local'],
  ['nat64.example', 'refused', 'link-local'],
  ['unknown.example', 'refused', 'ENOTFOUND'],
  ['127.example.com', 'allowed', ''],
  ['public.example', 'allowed', ''],
  // public addresses, however written
  ['8.8.8.8', 'allowed', ''],
  ['0x08080808', 'allowed', ''],
  ['134744072', 'allowed', ''],
  ['8.8.2056', 'allowed', ''],
  ['1.1.1.1', 'allowed', ''],
  ['93.184.215.14', 'allowed', ''],
  ['100.63.255.255', 'allowed', ''],
  ['100.128.0.0', 'allowed', ''],
  ['172.15.255.255', 'allowed', ''],
  ['172.32.0.1', 'allowed', ''],
  ['169.253.255.255', 'allowed', ''],
  ['[2606:4700:4700::1111]', 'allowed', ''],
  ['[::ffff:8.8.8.8]', 'allowed', ''],
  ['[64:ff9b::8.8.8.8]', 'allowed', ''],
  ['[2002:808:808::1]', 'allowed', ''],
];

describe('the outbound address policy on every spelling of an address', () => {
  const policy = createOutboundPolicy({ setting: 'test.setting', lookup });

  it('has a table of at least 60 spellings', () => {
    expect(SPELLINGS.length).toBeGreaterThanOrEqual(60);
    expect(new Set(SPELLINGS.map(([s]) => s)).size).toBe(SPELLINGS.length);
  });

  it.each(SPELLINGS)('%s is %s (%s)', async (host, verdict, why) => {
    const decision = await policy.resolve(host);
    expect(decision.ok ? 'allowed' : 'refused').toBe(verdict);
    if (!decision.ok) expect(decision.reason).toContain(why);
    // Whatever the URL parser makes of the same host gets the same verdict.
    let url: URL | undefined;
    try {
      url = new URL(`http://${host}/`);
    } catch {
      // not a URL host at all (a zone id, an invalid address): refused above
    }
    if (url) expect((await policy.checkUrl(url)).ok ? 'allowed' : 'refused').toBe(verdict);
  });

  it('names the address, its range and the setting that would open it', async () => {
    const decision = await policy.resolve('[::ffff:a9fe:a9fe]');
    expect(decision).toEqual({
      ok: false,
      reason:
        '::ffff:a9fe:a9fe is a link-local address (169.254.0.0/16, IPv4-mapped 169.254.169.254), not public; open it with test.setting',
    });
  });

  it('opens exactly what the configuration names, in any spelling', async () => {
    const opened = createOutboundPolicy({ setting: 's', allowAddresses: ['127.0.0.1'], lookup });
    for (const host of ['127.0.0.1', '127.1', '2130706433', '[::ffff:7f00:1]'])
      expect([host, (await opened.resolve(host)).ok]).toEqual([host, true]);
    for (const host of ['127.0.0.2', '[::1]', '10.0.0.1', '0.0.0.0'])
      expect([host, (await opened.resolve(host)).ok]).toEqual([host, false]);
    const named = createOutboundPolicy({
      setting: 's',
      allowHosts: ['*.corp.example'],
      lookup: async () => [{ address: '10.1.2.3', family: 4 }],
    });
    expect((await named.resolve('db.corp.example')).ok).toBe(true);
    expect((await named.resolve('db.corp.example.evil')).ok).toBe(false);
    const everything = createOutboundPolicy({ setting: 's', allowPrivateNetworks: true, lookup });
    expect((await everything.resolve('169.254.169.254')).ok).toBe(true);
    // Unspecified and multicast stay shut: 0.0.0.0 would reach this machine.
    expect((await everything.resolve('0.0.0.0')).ok).toBe(false);
    expect((await everything.resolve('[ff02::1]')).ok).toBe(false);
  });

  it('treats localhost as loopback without asking the resolver, and opens only the loopback addresses opened', async () => {
    const asked: string[] = [];
    const opened = createOutboundPolicy({
      setting: 's',
      allowAddresses: ['127.0.0.1'],
      lookup: async (name) => {
        asked.push(name);
        return [{ address: '93.184.215.14', family: 4 }];
      },
    });
    const decision = await opened.resolve('localhost');
    expect(decision.ok && decision.addresses.map((a) => [...a.bytes].join('.'))).toEqual(['127.0.0.1']);
    expect(asked).toEqual([]);
  });

  it('bounds a hung resolver', async () => {
    const hung = createOutboundPolicy({ setting: 's', lookup: () => new Promise(() => {}), lookupTimeoutMs: 50 });
    expect(await hung.resolve('slow.example')).toEqual({
      ok: false,
      reason: expect.stringMatching(/timed out after 50 ms/),
    });
  });

  it('knows loopback hosts by address, not by how the name starts', () => {
    for (const host of [
      '127.0.0.1',
      '127.0.0.2',
      '127.1',
      '0x7f000001',
      '::1',
      '[::1]',
      '::ffff:127.0.0.1',
      'localhost',
      'a.localhost',
    ])
      expect([host, isLoopbackHost(host)]).toEqual([host, true]);
    for (const host of [
      '127.example.com',
      '127.0.0.1.nip.io',
      '0.0.0.0',
      '::',
      '10.0.0.1',
      'localhost.example.com',
      'example.com',
    ])
      expect([host, isLoopbackHost(host)]).toEqual([host, false]);
  });
});

describe('the exposure rule', () => {
  const serving = (host: string) => () => assertSafeExposure(LangoConfig.parse({ server: { host } }));

  it('serves without auth on loopback in any spelling', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost', '::ffff:127.0.0.1'])
      expect(serving(host)).not.toThrow();
  });

  it('refuses names that only look like loopback, and every other address, without auth', () => {
    for (const host of ['127.example.com', '127.0.0.1.nip.io', '0.0.0.0', '::', '10.0.0.1'])
      expect(serving(host)).toThrow(ConfigError);
  });
});

describe('the pinned dispatcher', () => {
  let canary: http.Server;
  let port: number;
  let hits = 0;

  beforeAll(async () => {
    canary = http.createServer((_req, res) => {
      hits++;
      res.end('canary');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    port = (canary.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => canary.close(() => resolve()));
  });

  const loopbackSpellings = SPELLINGS.filter(([, v, why]) => v === 'refused' && why === 'loopback').map(([s]) => s);

  it.each(loopbackSpellings.filter((s) => !s.includes('%')))(
    'never connects to %s when loopback is not opened',
    async (host) => {
      const agent = createPinnedAgent({ policy: createOutboundPolicy({ setting: 's', lookup }) });
      try {
        let url: string;
        try {
          url = new URL(`http://${host}:${port}/`).href;
        } catch {
          return; // the URL parser refuses it before any connection
        }
        const error = await request(url, { dispatcher: agent }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(OutboundRefusedError);
      } finally {
        await agent.close();
      }
      expect(hits).toBe(0);
    },
  );

  it('connects once loopback is opened', async () => {
    const agent = createPinnedAgent({
      policy: createOutboundPolicy({ setting: 's', allowAddresses: ['127.0.0.0/8'] }),
    });
    try {
      const res = await request(`http://0x7f.1:${port}/`, { dispatcher: agent });
      expect(await res.body.text()).toBe('canary');
    } finally {
      await agent.close();
    }
  });
});
