// The demo's check policies (issue 61): one per platform of the simulated fleet, each with a service
// that platform's simulated devices run (src/fleet/device-catalog.ts), its system disk and an HTTPS check
// of an internal web application. The fleet simulates every result (the URLs are never fetched), and
// its failure spells come and go, so the console's failing checks are never empty for long.
import type { Platform } from '../agent/device-state.js';

interface DemoPolicy {
  name: string;
  platforms: Platform[];
  checks: Array<{ name: string; kind: string; params: Record<string, unknown>; interval_seconds: number }>;
}

/** Thresholds low enough that the fuller simulated disks (they fill 10–70 %) show a WARNING. */
const DISK = { warn_percent: 60, crit_percent: 90 };

export const DEMO_POLICIES: DemoPolicy[] = [
  {
    name: 'Hypervisors (Linux)',
    platforms: ['linux'],
    checks: [
      { name: 'Proxmox API proxy', kind: 'service', params: { name: 'pveproxy' }, interval_seconds: 60 },
      { name: 'Root disk', kind: 'disk', params: { mount: '/', ...DISK }, interval_seconds: 120 },
      { name: 'Intranet answers', kind: 'http', params: { url: 'https://intranet.sonnenschein.lan/health', warn_ms: 800, cert_warn_days: 21 }, interval_seconds: 30 },
    ],
  },
  {
    name: 'Firewalls (FreeBSD)',
    platforms: ['freebsd'],
    checks: [
      { name: 'DNS resolver', kind: 'service', params: { name: 'unbound' }, interval_seconds: 60 },
      { name: 'Log disk', kind: 'disk', params: { mount: '/var/log', ...DISK }, interval_seconds: 120 },
      { name: 'VPN portal answers', kind: 'http', params: { url: 'https://vpn.weber-partner.lan/health', warn_ms: 800, cert_warn_days: 21 }, interval_seconds: 30 },
    ],
  },
  {
    name: 'Workstations (Windows)',
    platforms: ['windows'],
    checks: [
      { name: 'Defender running', kind: 'service', params: { name: 'WinDefend' }, interval_seconds: 60 },
      { name: 'System drive', kind: 'disk', params: { mount: 'C:', ...DISK }, interval_seconds: 120 },
      { name: 'Dealer portal answers', kind: 'http', params: { url: 'https://portal.autohaus-nordring.lan/health', warn_ms: 800, cert_warn_days: 21 }, interval_seconds: 30 },
    ],
  },
];

/** Chance per run that a demo agent's HTTPS check starts a failure spell: a few failing at any time. */
export const DEMO_CHECK_FAILURE_CHANCE = 0.05;
