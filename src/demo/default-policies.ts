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

/** A platform's policy: its service, its system disk and an internal web application over HTTPS. */
function platformPolicy(name: string, platform: Platform, service: [string, string], disk: [string, string], site: [string, string]): DemoPolicy {
  return {
    name,
    platforms: [platform],
    checks: [
      { name: service[0], kind: 'service', params: { name: service[1] }, interval_seconds: 60 },
      { name: disk[0], kind: 'disk', params: { mount: disk[1], ...DISK }, interval_seconds: 120 },
      { name: site[0], kind: 'http', params: { url: site[1], warn_ms: 800, cert_warn_days: 21 }, interval_seconds: 30 },
    ],
  };
}

export const DEMO_POLICIES: DemoPolicy[] = [
  platformPolicy('Hypervisors (Linux)', 'linux', ['Proxmox API proxy', 'pveproxy'], ['Root disk', '/'], ['Intranet answers', 'https://intranet.sonnenschein.lan/health']),
  platformPolicy('Firewalls (FreeBSD)', 'freebsd', ['DNS resolver', 'unbound'], ['Log disk', '/var/log'], ['VPN portal answers', 'https://vpn.weber-partner.lan/health']),
  platformPolicy('Workstations (Windows)', 'windows', ['Defender running', 'WinDefend'], ['System drive', 'C:'], ['Dealer portal answers', 'https://portal.autohaus-nordring.lan/health']),
];

/** Chance per run that a demo agent's HTTPS check starts a failure spell: a few failing at any time. */
export const DEMO_CHECK_FAILURE_CHANCE = 0.05;
