// The fleet simulator's devices look like a real fleet (issue 57, item 21): each simulated host has its
// own addresses (the demo's firewalls all reported one WAN address), and the Windows software list pairs
// each program with its own publisher and version (it had "Adobe Acrobat" by Mozilla).
import { describe, expect, it } from 'vitest';
import { systemFactsOf } from '../modules/agents/system-facts.js';
import { SimulatedSystem } from './simulated-system.js';

const primaryIp = (hostname: string, platform: 'freebsd' | 'linux' | 'windows' = 'freebsd') =>
  systemFactsOf(new SimulatedSystem(platform, hostname, () => 0.5).collect(null) as Record<string, unknown>).primary_ip;

describe('simulated systems', () => {
  it('give every host its own primary address, the same at every heartbeat', () => {
    const firewalls = Array.from({ length: 20 }, (_, i) => primaryIp(`fw-${i + 1}`));
    expect(new Set(firewalls).size).toBe(20);
    for (const ip of firewalls) expect(ip).toMatch(/^10\.\d+\.\d+\.\d+$/);
    expect(primaryIp('fw-1')).toBe(firewalls[0]);
    expect(primaryIp('pve-1', 'linux')).not.toBe(primaryIp('pve-2', 'linux'));
  });

  it('list Windows software with its own publisher, and the version its name carries', () => {
    const software = new SimulatedSystem('windows', 'win-1', () => 0.5).collect(null).software as Array<{ name: string; version: string; publisher: string }>;
    const publisherOf = (name: string) => software.find((s) => s.name.startsWith(name))?.publisher;
    expect(publisherOf('Adobe Acrobat')).toBe('Adobe Inc.');
    expect(publisherOf('Mozilla Firefox')).toBe('Mozilla');
    expect(publisherOf('Google Chrome')).toBe('Google LLC');
    expect(publisherOf('7-Zip')).toBe('Igor Pavlov');
    for (const s of software) {
      const named = /\s(\d+(?:\.\d+)+)\b/.exec(s.name)?.[1];
      if (named) expect(s.version.startsWith(named), `${s.name}: ${s.version}`).toBe(true);
    }
  });
});
