// System data for one simulated agent of the fleet: a realistic document of its platform (profiles/*.json,
// shaped like ../shared/fixtures) with the parts a chart shows moving plausibly from beat to beat — CPU
// and memory wander around the machine's own level with now and then a spike, disks fill slowly,
// interface counters grow at a rate that follows the time of day, gateway latency jitters and loses a
// packet now and then, uptime counts. The profile is shared by every agent (10,000 agents must fit in one
// process); each beat builds a fresh shallow copy with only the moving parts new.
import { readFileSync } from 'node:fs';
import type { DeviceView, Platform, SeedPeer } from '../agent/device-state.js';
import { hypervisorGuests, wireguardServers, type PeerStats } from '../agent/heartbeat-document.js';

type Json = Record<string, unknown>;
type Item = Record<string, unknown>;

const PROFILE_FILES: Record<Platform, string> = { freebsd: 'firewall.json', linux: 'hypervisor.json', windows: 'windows.json' };
const profiles = new Map<Platform, Json>();

/** The platform's profile, read once per process. */
function profile(platform: Platform): Json {
  let found = profiles.get(platform);
  if (!found) {
    found = JSON.parse(readFileSync(new URL(`./profiles/${PROFILE_FILES[platform]}`, import.meta.url), 'utf8')) as Json;
    profiles.set(platform, found);
  }
  return found;
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const list = (value: unknown): Item[] => (Array.isArray(value) ? (value as Item[]) : []);

/** A value that drifts back toward `level`, with noise, and rarely a spike. */
class Wander {
  constructor(
    private value: number,
    private readonly level: number,
    private readonly noise: number,
    private readonly spikeChance = 0,
  ) {}

  /** The value as the last next() left it (a check reads it without moving it). */
  get current(): number {
    return this.value;
  }

  next(min: number, max: number, random: () => number): number {
    this.value += (this.level - this.value) * 0.2 + (random() - 0.5) * 2 * this.noise;
    if (random() < this.spikeChance) this.value += this.noise * 6;
    this.value = clamp(this.value, min, max);
    return this.value;
  }
}

/** A small stable number from a text (FNV-1a), so one host name always gets the same addresses. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/**
 * The interface's IPv4 addresses for this host: the profile's, moved into a /24 of the host's own
 * (10.x.y.host). Every simulated firewall reported the profile's WAN address, so the fleet's IP column
 * and the search by IP showed one address for all of them (issue 57).
 */
function ownAddresses(addresses: unknown, hostname: string, index: number): unknown {
  if (!Array.isArray(addresses)) return addresses;
  return addresses.map((entry: unknown, n) => {
    const match = typeof entry === 'string' ? /^(\d+)\.\d+\.\d+\.(\d+)(\/\d+)?$/.exec(entry) : null;
    if (!match) return entry;
    const hash = hashOf(`${hostname}#${index}#${n}`);
    return `${match[1]}.${(hash >>> 8) & 0xff}.${hash & 0xff}.${match[2]}${match[3] ?? ''}`;
  });
}

/** Share of the peak traffic rate at this hour: low at night, high in office hours. */
function dailyLoad(at: Date): number {
  const hour = at.getHours() + at.getMinutes() / 60;
  return 0.25 + 0.75 * Math.max(0, Math.sin(((hour - 6) / 14) * Math.PI));
}

export interface SystemReadings {
  cpuPercent: number;
  memoryPercent: number;
  memoryTotalBytes: number;
  disks: Array<{ mount: string; usedBytes: number; totalBytes: number }>;
}

export class SimulatedSystem {
  /** Per platform, its profile's peer traffic figures (like the profiles, read once per process). */
  private static readonly statsByPlatform: Partial<Record<Platform, ReadonlyMap<string, PeerStats>>> = {};
  private readonly template: Json;
  private readonly cpu: Wander;
  private readonly memory: Wander;
  private readonly gatewayRtt: Wander[];
  /** Bytes per second at peak, per interface, and the counters as they are now. */
  private readonly traffic: Array<{ rxRate: number; txRate: number; rx: number; tx: number }>;
  private readonly diskUsed: number[];
  /** Per interface, this host's own IPv4 addresses. */
  private readonly ipv4: unknown[];
  private readonly bootedAt: number;
  private last: number;

  constructor(
    readonly platform: Platform,
    readonly hostname: string,
    private readonly random: () => number = Math.random,
    now = Date.now(),
  ) {
    this.template = profile(platform);
    const level = 5 + random() * 35;
    this.cpu = new Wander(level, level, 4, 0.03);
    const memoryLevel = 30 + random() * 45;
    this.memory = new Wander(memoryLevel, memoryLevel, 1.5);
    this.gatewayRtt = list(this.template.gateways).map((g) => {
      const base = Number(g.rtt_ms ?? 10) * (0.6 + random() * 0.8);
      return new Wander(base, base, base * 0.15, 0.02);
    });
    this.traffic = list((this.template.network as Json | undefined)?.interfaces).map((i) => ({
      rxRate: (1 + random() * 30) * 125_000,
      txRate: (0.5 + random() * 10) * 125_000,
      rx: Number(i.rx_bytes ?? 0) * random(),
      tx: Number(i.tx_bytes ?? 0) * random(),
    }));
    this.ipv4 = list((this.template.network as Json | undefined)?.interfaces).map((nic, i) => ownAddresses(nic.ipv4, hostname, i));
    this.diskUsed = list(this.template.disks).map((d) => Number(d.total_bytes ?? 0) * (0.1 + random() * 0.6));
    this.bootedAt = now - Math.floor(random() * 90 * 86_400_000);
    this.last = now;
  }

  /** The next heartbeat's system data; `device` supplies what commands change (updates, guests). */
  collect(device: DeviceView | null, now = Date.now()): Json {
    const seconds = Math.max(0, (now - this.last) / 1000);
    this.last = now;
    const at = new Date(now);
    const { updates: _fromProfile, hypervisor, vpn, ...rest } = this.template;
    const cpu = this.template.cpu as Json;
    const memory = this.template.memory as Json;
    const memoryTotal = Number(memory.total_bytes ?? 0);
    const memoryPercent = this.memory.next(5, 98, this.random);
    return {
      ...rest,
      hostname: this.hostname,
      collected_at: at.toISOString(),
      uptime_seconds: Math.floor((now - this.bootedAt) / 1000),
      cpu: { ...cpu, usage_percent: round(this.cpu.next(0.5, 100, this.random)) },
      memory: { ...memory, used_bytes: Math.round((memoryTotal * memoryPercent) / 100), used_percent: round(memoryPercent) },
      disks: list(this.template.disks).map((disk, i) => this.disk(disk, i, seconds)),
      network: { ...(this.template.network as Json), interfaces: list((this.template.network as Json | undefined)?.interfaces).map((nic, i) => this.nic(nic, i, seconds, at)) },
      ...(this.template.gateways ? { gateways: list(this.template.gateways).map((g, i) => this.gateway(g, i)) } : {}),
      // Guests come from the device, so start/stop commands show in the next heartbeat.
      ...(hypervisor && device ? { hypervisor: { ...(hypervisor as Json), node: this.hostname, ...hypervisorGuests(device) } } : {}),
      // WireGuard peers too (seeded from the profile, see seedPeers): added and deleted ones show.
      ...(vpn ? { vpn: device ? { ...(vpn as Json), wireguard: { servers: wireguardServers(device, this.peerStats()) } } : vpn } : {}),
    };
  }

  /**
   * What the device's own checks read (simulated-checks.ts): CPU, memory and disks as the last heartbeat
   * reported them. Reading moves nothing, so checks and heartbeats never disagree and checks cost no draw.
   */
  readings(): SystemReadings {
    const memoryTotal = Number((this.template.memory as Json).total_bytes ?? 0);
    return {
      cpuPercent: round(this.cpu.current),
      memoryPercent: round(this.memory.current),
      memoryTotalBytes: memoryTotal,
      disks: list(this.template.disks).map((disk, i) => ({ mount: String(disk.mount ?? ''), usedBytes: Math.round(this.diskUsed[i] ?? 0), totalBytes: Number(disk.total_bytes ?? 0) })),
    };
  }

  /** The profile's WireGuard peers, for the fresh device of a simulated firewall to start with. */
  seedPeers(): SeedPeer[] {
    return this.profilePeers().map((p) => ({ uuid: String(p.uuid), name: String(p.name), tunnel_address: String(p.tunnel_address), public_key: String(p.public_key), endpoint: String(p.endpoint ?? '') }));
  }

  private profilePeers(): Item[] {
    return list(list(((this.template.vpn as Json | undefined)?.wireguard as Json | undefined)?.servers)[0]?.peers);
  }

  /** The profile's traffic figures of its peers, by uuid (shared, read-only). */
  private peerStats(): ReadonlyMap<string, PeerStats> {
    return (SimulatedSystem.statsByPlatform[this.platform] ??= new Map(
      this.profilePeers().map((p) => [String(p.uuid), { latest_handshake: p.latest_handshake, transfer_rx: p.transfer_rx, transfer_tx: p.transfer_tx, status: p.status }]),
    ));
  }

  private disk(disk: Item, i: number, seconds: number): Item {
    const total = Number(disk.total_bytes ?? 0);
    // Logs and data grow about 50 MB a day, and a cleanup now and then frees some.
    let used = (this.diskUsed[i] ?? 0) + seconds * 600 * (0.5 + this.random());
    if (this.random() < 0.002) used *= 0.9;
    used = clamp(used, 0, total * 0.97);
    this.diskUsed[i] = used;
    return { ...disk, used_bytes: Math.round(used), used_percent: total > 0 ? round((used / total) * 100) : 0 };
  }

  private nic(nic: Item, i: number, seconds: number, at: Date): Item {
    const t = this.traffic[i];
    const own = { ...nic, ipv4: this.ipv4[i] ?? nic.ipv4 };
    if (!t || nic.status === 'down') return own;
    const load = dailyLoad(at) * (0.7 + this.random() * 0.6);
    t.rx += Math.round(t.rxRate * load * seconds);
    t.tx += Math.round(t.txRate * load * seconds);
    return { ...own, rx_bytes: Math.round(t.rx), tx_bytes: Math.round(t.tx) };
  }

  private gateway(gateway: Item, i: number): Item {
    const rtt = this.gatewayRtt[i]?.next(0.2, 2000, this.random) ?? 0;
    const loss = this.random() < 0.05 ? Math.ceil(this.random() * 5) : 0;
    return { ...gateway, rtt_ms: round(rtt, 3), loss_percent: loss, status: loss > 3 ? 'loss' : 'online' };
  }
}
