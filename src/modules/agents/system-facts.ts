// The few facts of an agent's latest heartbeat that a technician sorts and filters the agents list by
// (issue 33): OS and version, primary IPv4 address, uptime, the fullest disk, pending updates and
// whether a reboot is needed. They are kept in the agent row, written with each heartbeat, so the
// list never reads the ~30 KB system data of every agent. Agents may send any shape: every value is
// guarded by its type, and a value that is not there is null ("unknown"), never a guess.
// Migration 0017 holds a frozen copy of this logic to fill the facts of agents seen before it.
import { isIPv4 } from 'node:net';
import type { AgentFactColumns } from '../../db/schema.js';

export type SystemFacts = AgentFactColumns;

type Obj = Record<string, unknown>;

const INT4_MAX = 2_147_483_647;
const MAX_TEXT = 200;
/** A JSON object (not an array, not null). */
export const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObject) : []);
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

// eslint-disable-next-line no-control-regex -- NUL is what it removes
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text PostgreSQL can store (no NUL, no lone surrogate: either failed the whole heartbeat batch), short. */
function text(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const cleaned = v.replace(UNSTORABLE, '').trim().slice(0, MAX_TEXT);
  return cleaned === '' ? null : cleaned;
}

/** A disk's used share in percent: `used_percent` when plausible, else from its byte counts. */
function diskPercent(disk: Obj): number | null {
  if (finite(disk.used_percent) && disk.used_percent >= 0 && disk.used_percent <= 100) return disk.used_percent;
  if (finite(disk.used_bytes) && finite(disk.total_bytes) && disk.total_bytes > 0 && disk.used_bytes >= 0) {
    return Math.min(100, (disk.used_bytes / disk.total_bytes) * 100);
  }
  return null;
}

function worstDisk(system: Obj): { percent: number; mount: string | null } | null {
  let worst: { percent: number; mount: string | null } | null = null;
  for (const disk of objects(system.disks)) {
    const percent = diskPercent(disk);
    if (percent !== null && (worst === null || percent > worst.percent)) worst = { percent: Math.round(percent * 10) / 10, mount: text(disk.mount) };
  }
  return worst;
}

/** The first usable IPv4 address of an interface, or null (down, loopback, none). */
function usableIpv4(iface: Obj): string | null {
  if (iface.status === 'down' || (typeof iface.name === 'string' && /^lo\d*$/.test(iface.name))) return null;
  if (!Array.isArray(iface.ipv4)) return null;
  for (const entry of iface.ipv4) {
    if (typeof entry !== 'string') continue;
    const slash = entry.indexOf('/');
    const address = slash === -1 ? entry : entry.slice(0, slash);
    if (isIPv4(address) && !address.startsWith('127.')) return address;
  }
  return null;
}

/**
 * The address a technician connects to: the first IPv4 address of the interface the default route
 * leaves through, else of the first interface that is not down and not loopback (`lo`, `lo0`, 127.x).
 * Loops rather than filtered copies: it runs for every heartbeat (issue 36's allocation cuts).
 */
export function primaryIpOf(system: Obj): string | null {
  const network = isObject(system.network) ? system.network : {};
  const interfaces = Array.isArray(network.interfaces) ? network.interfaces : [];
  let viaDefault: string | undefined;
  for (const route of Array.isArray(system.routes) ? system.routes : []) {
    if (!isObject(route) || (route.destination !== 'default' && route.destination !== '0.0.0.0/0')) continue;
    viaDefault = typeof route.interface === 'string' ? route.interface : undefined;
    break;
  }
  // Two passes, as the filtered copies ordered them: the route's interface first (without one, the
  // interfaces without a name, as before), then the others in document order.
  for (const first of [true, false]) {
    for (const iface of interfaces) {
      if (!isObject(iface) || (iface.name === viaDefault) !== first) continue;
      const address = usableIpv4(iface);
      if (address) return address;
    }
  }
  return null;
}

/**
 * Pending updates: the entries of `updates.packages` (firewall, Linux) plus `updates.pending` (Windows);
 * 0 when the agent says none are available; null when it says nothing countable.
 */
function pendingUpdates(updates: Obj): number | null {
  const lists = [updates.packages, updates.pending].filter(Array.isArray);
  if (lists.length > 0) return Math.min(INT4_MAX, lists.reduce((sum, l) => sum + l.length, 0));
  return updates.available === false ? 0 : null;
}

export function systemFactsOf(system: Obj): SystemFacts {
  const os = isObject(system.os) ? system.os : {};
  const updates = isObject(system.updates) ? system.updates : {};
  const disk = worstDisk(system);
  return {
    os_name: text(os.name),
    os_version: text(os.version),
    primary_ip: primaryIpOf(system),
    uptime_seconds: finite(system.uptime_seconds) && system.uptime_seconds >= 0 ? Math.min(INT4_MAX, Math.floor(system.uptime_seconds)) : null,
    disk_used_percent: disk?.percent ?? null,
    disk_worst_mount: disk?.mount ?? null,
    pending_updates: pendingUpdates(updates),
    reboot_required: typeof updates.needs_reboot === 'boolean' ? updates.needs_reboot : null,
  };
}
