// Realistic heartbeat bodies for the load client: the FreeBSD firewall fixture, compacted, padded to the
// target size with ARP-table entries (an unknown field the server stores and ignores, as a real agent's
// extra data would be), one body per simulated agent. Each body is encoded once; per request only two
// fixed-width fields (collected_at, cpu.usage_percent) are rewritten in place, so bodies differ between
// heartbeats without the client paying for JSON.stringify or UTF-8 encoding on the hot path.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEFAULT_FIXTURE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../shared/fixtures/heartbeat-freebsd.json',
);

export interface HeartbeatBody {
  readonly agentId: string;
  readonly bytes: Buffer;
  /** Rewrites collected_at and cpu.usage_percent for the next request (same length, in place). */
  touch(now: Date): void;
}

const USAGE_KEY = '"cpu":{"usage_percent":';
const COLLECTED_KEY = '"collected_at":"';
const USAGE_PLACEHOLDER = 12.34; // serialises as exactly five characters, like every "dd.dd" we write

/** The template document: the fixture with placeholders, padded to at least `targetBytes` compact. */
export function templateDocument(fixturePath: string, targetBytes: number): Record<string, unknown> {
  const doc = JSON.parse(readFileSync(fixturePath, 'utf8')) as Record<string, unknown>;
  const cpu = doc.cpu as Record<string, unknown> | undefined;
  if (!cpu || typeof doc.collected_at !== 'string') throw new Error(`${fixturePath}: no cpu or collected_at`);
  const { usage_percent: _usage, ...otherCpu } = cpu;
  doc.cpu = { usage_percent: USAGE_PLACEHOLDER, ...otherCpu };
  doc.collected_at = isoSeconds(new Date());
  const arp: Record<string, unknown>[] = [];
  doc.arp_table = arp;
  for (let i = 0; JSON.stringify(doc).length < targetBytes; i++) arp.push(arpEntry(i));
  return doc;
}

/** One body per agent: the template with that agent's id and hostname. */
export function heartbeatBodies(template: Record<string, unknown>, agentIds: readonly string[]): HeartbeatBody[] {
  return agentIds.map((agentId, i) => {
    const text = JSON.stringify({
      ...template,
      agent_id: agentId,
      platform: 'freebsd',
      hostname: hostnameFor(i),
    });
    return bodyWithSlots(agentId, Buffer.from(text, 'utf8'));
  });
}

/** The hostname simulated agent number `i` registers and reports with. */
export function hostnameFor(i: number): string {
  return `fw-${String(i).padStart(4, '0')}.example.lan`;
}

function bodyWithSlots(agentId: string, bytes: Buffer): HeartbeatBody {
  const usageAt = bytes.indexOf(USAGE_KEY) + USAGE_KEY.length;
  const collectedAt = bytes.indexOf(COLLECTED_KEY) + COLLECTED_KEY.length;
  if (usageAt < USAGE_KEY.length || collectedAt < COLLECTED_KEY.length) throw new Error('slot not found');
  return {
    agentId,
    bytes,
    touch(now) {
      bytes.write((10 + Math.random() * 89.99).toFixed(2), usageAt, 'latin1');
      bytes.write(isoSeconds(now), collectedAt, 'latin1');
    },
  };
}

/** RFC 3339 in UTC without fractions: always 20 characters. */
function isoSeconds(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}

function arpEntry(i: number): Record<string, unknown> {
  const hex = (n: number) => (n & 0xff).toString(16).padStart(2, '0');
  return {
    ip: `10.1.${(i >> 8) & 0xff}.${(i & 0xff) + 1}`,
    mac: ['3c', hex(i * 7), hex(i * 13), hex(i * 31), hex(i >> 8), hex(i)].join(':'),
    interface: i % 3 === 0 ? 'igc1_vlan20' : 'igc1',
    hostname: i % 4 === 0 ? '' : `host-${i}.office.lan`,
    expires: 1200 - (i % 600),
    permanent: false,
    type: 'ethernet',
  };
}
