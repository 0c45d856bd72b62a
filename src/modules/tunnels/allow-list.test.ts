import { describe, expect, it } from 'vitest';
import { AllowList, normalizeAddress, parseAllowEntry } from './allow-list.js';

describe('allow_from entries', () => {
  it('accepts addresses and networks of both families, in canonical form', () => {
    expect(parseAllowEntry('192.0.2.1')).toBe('192.0.2.1');
    expect(parseAllowEntry('10.0.0.0/8')).toBe('10.0.0.0/8');
    expect(parseAllowEntry('2001:DB8:0:0::1')).toBe('2001:db8::1');
    expect(parseAllowEntry('2001:db8::/32')).toBe('2001:db8::/32');
    expect(parseAllowEntry('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(parseAllowEntry('::ffff:10.0.0.0/104')).toBe('10.0.0.0/8');
    expect(parseAllowEntry('0.0.0.0/0')).toBe('0.0.0.0/0');
  });

  it('refuses what is not an address or a network', () => {
    for (const bad of ['', 'nope', '1.2.3', '256.0.0.1', '10.0.0.0/33', 'fe80::1/129', 'fe80::1%eth0', '10.0.0.1/', '/8', '10.0.0.0/8/8', ' 10.0.0.1']) {
      expect(parseAllowEntry(bad), bad).toBeNull();
    }
  });
});

describe('AllowList', () => {
  it('matches addresses, networks and IPv4-mapped forms of the same address', () => {
    const list = new AllowList(['127.0.0.1', '10.20.0.0/16', '2001:db8::/32']);
    expect(list.allows('127.0.0.1')).toBe(true);
    expect(list.allows('::ffff:127.0.0.1')).toBe(true);
    expect(list.allows('127.0.0.2')).toBe(false);
    expect(list.allows('10.20.255.1')).toBe(true);
    expect(list.allows('10.21.0.1')).toBe(false);
    expect(list.allows('2001:db8:1::5')).toBe(true);
    expect(list.allows('::1')).toBe(false);
    expect(list.allows(undefined)).toBe(false);
    expect(list.allows('garbage')).toBe(false);
  });

  it('normalises what sockets report', () => {
    expect(normalizeAddress('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(normalizeAddress('::FFFF:198.51.100.7')).toBe('198.51.100.7');
    expect(normalizeAddress('2001:DB8::0:1')).toBe('2001:db8::1');
    expect(normalizeAddress('127.0.0.1')).toBe('127.0.0.1');
  });
});
