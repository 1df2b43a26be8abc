/** Which origins an admin allowed and which addresses are internal (src/adapters/outbound-policy.ts), as tables. */
import { describe, expect, test } from 'vitest';
import { addressRefusal, hostRefusal, originOf, parseOriginList } from '../../src/adapters/outbound-policy.ts';

describe('addressRefusal', () => {
  test.each([
    ['127.0.0.1', 'loopback address'],
    ['127.255.0.9', 'loopback address'],
    ['::1', 'loopback address'],
    ['::ffff:127.0.0.1', 'loopback address'],
    ['::ffff:7f00:1', 'loopback address'],
    ['0:0:0:0:0:ffff:7f00:1', 'loopback address'],
    ['::127.0.0.1', 'loopback address'],
    ['64:ff9b::7f00:1', 'loopback address'],
    ['2002:7f00:1::', 'loopback address'],
    ['169.254.169.254', 'cloud metadata address'],
    ['::ffff:169.254.169.254', 'cloud metadata address'],
    ['fd00:ec2::254', 'cloud metadata address'],
    ['169.254.1.1', 'link-local address'],
    ['fe80::1', 'link-local address'],
    ['febf::1', 'link-local address'],
    ['0.0.0.0', 'unspecified address'],
    ['0.1.2.3', 'unspecified address'],
    ['::', 'unspecified address'],
    ['10.0.0.1', 'private address'],
    ['10.255.255.255', 'private address'],
    ['172.16.0.1', 'private address'],
    ['172.31.255.255', 'private address'],
    ['192.168.1.1', 'private address'],
    ['::ffff:10.1.2.3', 'private address'],
    ['fc00::1', 'private (unique local) address'],
    ['fdff::1', 'private (unique local) address'],
    ['100.64.0.1', 'shared (CGNAT) address'],
    ['100.127.255.255', 'shared (CGNAT) address'],
    ['224.0.0.1', 'multicast address'],
    ['ff02::1', 'multicast address'],
    ['255.255.255.255', 'reserved address'],
    ['not-an-ip', 'not an IP address'],
  ])('%s is refused: %s', (ip, why) => {
    expect(addressRefusal(ip)).toBe(why);
  });

  test.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.255.255',
    '11.0.0.1',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '2606:4700::1111',
  ])('%s is public', (ip) => {
    expect(addressRefusal(ip)).toBeUndefined();
  });
});

describe('hostRefusal', () => {
  test.each([
    ['localhost', 'loopback host name'],
    ['LOCALHOST.', 'loopback host name'],
    ['api.localhost', 'loopback host name'],
    ['metadata.google.internal', 'cloud metadata host name'],
    ['[::1]', 'loopback address'],
    ['[::ffff:7f00:1]', 'loopback address'],
    ['10.0.0.5', 'private address'],
  ])('%s: %s', (host, why) => {
    expect(hostRefusal(host)).toBe(why);
  });

  test('URL forms of an address (decimal, octal, hex, mapped) reach the check as the address itself', () => {
    for (const u of ['http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f.1/', 'http://127.1/', 'http://[::ffff:127.0.0.1]/'])
      expect(hostRefusal(new URL(u).hostname), u).toBe('loopback address');
    expect(hostRefusal('images.example.com')).toBeUndefined();
  });
});

describe('parseOriginList', () => {
  test('origins are normalised; * and https://* allow public origins', () => {
    const l = parseOriginList(' https://Images.Example.com:443/ , http://10.1.0.5:8080,,');
    expect([...l.listed]).toEqual(['https://images.example.com', 'http://10.1.0.5:8080']);
    expect(l.anyPublic).toBe(false);
    expect(parseOriginList('*').anyPublic).toBe('http');
    expect(parseOriginList('https://*').anyPublic).toBe('https');
    expect(parseOriginList('https://*,*').anyPublic).toBe('http');
    expect(parseOriginList(undefined)).toEqual({ listed: new Set(), anyPublic: false });
  });

  test.each([
    ['https://x.example/images', /nothing may follow/],
    ['https://user:pw@x.example', /nothing may follow/],
    ['ftp://x.example', /only http and https/],
    ['x.example', /not an origin/],
  ])('%s is refused', (entry, why) => {
    expect(() => parseOriginList(entry)).toThrow(why);
    expect(() => originOf(entry)).toThrow(why);
  });
});
