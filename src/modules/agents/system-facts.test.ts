// The list's facts from real heartbeats (the shared fixtures of all three platforms) and from hostile or
// partial ones: every value guarded by its type, unknown stays null, text stays storable.
import { describe, expect, it } from 'vitest';
import { fixtureText } from '../../../test/helpers/fixtures.js';
import { systemFactsOf } from './system-facts.js';

const fixture = (platform: string) => JSON.parse(fixtureText(`heartbeat-${platform}.json`)) as Record<string, unknown>;

describe('systemFactsOf', () => {
  it('reads the firewall fixture: the default route picks the WAN address, the fullest of two disks, package updates', () => {
    expect(systemFactsOf(fixture('freebsd'))).toEqual({
      os_name: 'OPNsense',
      os_version: '25.7.8',
      primary_ip: '10.92.65.27',
      uptime_seconds: 1234567,
      disk_used_percent: 5,
      disk_worst_mount: '/',
      pending_updates: 2,
      reboot_required: false,
    });
  });

  it('reads the hypervisor and Windows fixtures (Windows counts `updates.pending`)', () => {
    expect(systemFactsOf(fixture('linux'))).toMatchObject({ os_name: 'Proxmox VE', os_version: '9.1.1', primary_ip: '10.80.89.127', pending_updates: 1, reboot_required: true, disk_used_percent: 4.4 });
    expect(systemFactsOf(fixture('windows'))).toMatchObject({
      os_name: 'Microsoft Windows 11 Pro',
      os_version: '10.0.26100',
      primary_ip: '10.1.0.57',
      pending_updates: 1,
      disk_used_percent: 35.7,
      disk_worst_mount: 'C:',
    });
  });

  it('takes the default route interface first, skips down and loopback interfaces and bad addresses', () => {
    const system = {
      routes: [{ destination: '0.0.0.0/0', interface: 'wan' }],
      network: {
        interfaces: [
          { name: 'lo0', ipv4: ['10.0.0.1/8'] },
          { name: 'lan', status: 'up', ipv4: ['192.168.1.1/24'] },
          { name: 'wan', status: 'up', ipv4: ['not an ip', 42, '999.1.1.1', '127.0.0.2', '198.51.100.7/30'] },
        ],
      },
    };
    expect(systemFactsOf(system).primary_ip).toBe('198.51.100.7');
    system.routes = [];
    expect(systemFactsOf(system).primary_ip).toBe('192.168.1.1');
    system.network.interfaces[1]!.status = 'down';
    expect(systemFactsOf(system).primary_ip).toBe('198.51.100.7');
  });

  it('computes a disk percentage from bytes when none is given and takes the fullest disk', () => {
    const facts = systemFactsOf({ disks: [{ mount: '/', used_percent: 40 }, { mount: '/var', used_bytes: 873, total_bytes: 1000 }, { mount: '/bad', used_percent: 250 }, 'x'] });
    expect(facts).toMatchObject({ disk_used_percent: 87.3, disk_worst_mount: '/var' });
  });

  it('leaves out what an agent did not say or said in the wrong shape, and never keeps a NUL', () => {
    expect(systemFactsOf({})).toEqual({
      os_name: null,
      os_version: null,
      primary_ip: null,
      uptime_seconds: null,
      disk_used_percent: null,
      disk_worst_mount: null,
      pending_updates: null,
      reboot_required: null,
    });
    const odd = systemFactsOf({ os: { name: 'Evil\u0000OS\ud800', version: 7 }, uptime_seconds: -5, updates: { needs_reboot: 'yes', packages: 'many' }, disks: 'full' });
    expect(odd).toMatchObject({ os_name: 'EvilOS', os_version: null, uptime_seconds: null, reboot_required: null, pending_updates: null, disk_used_percent: null });
    expect(systemFactsOf({ updates: { available: false } }).pending_updates).toBe(0);
    expect(systemFactsOf({ uptime_seconds: 1e12 }).uptime_seconds).toBe(2_147_483_647);
    expect(systemFactsOf({ os: { name: 'x'.repeat(5000) } }).os_name).toHaveLength(200);
  });
});
