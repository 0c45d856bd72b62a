// The simulated device behind one reference agent, kept in a JSON file: firmware version, pending
// updates, reboots, hypervisor guests and WireGuard servers with their peers — plus the agent id the
// server assigned. One store per agent instance; every change is written atomically (temp + rename).
import { randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { generateWireGuardKeyPair } from './wireguard.js';

export type Platform = 'freebsd' | 'linux' | 'windows';
export type GuestType = 'vm' | 'container';
export type GuestStatus = 'running' | 'stopped';

export interface PendingUpdate {
  name: string;
  current: string;
  new: string;
  security: boolean;
  /** Applying it moves the firmware/OS version to `new`. */
  core?: boolean;
}

export interface Guest {
  vmid: number;
  name: string;
  type: GuestType;
  status: GuestStatus;
  node: string;
}

export interface VpnPeer {
  uuid: string;
  name: string;
  server_name: string;
  tunnel_address: string;
  public_key: string;
  allowed_ips: string;
  dns: string | null;
  endpoint: string;
  created_at: string;
}

export interface VpnServer {
  uuid: string;
  name: string;
  /** The server's own address with the tunnel subnet's prefix, e.g. 10.200.0.1/24. */
  address: string;
  listen_port: number;
  public_key: string;
  private_key: string;
  peers: VpnPeer[];
}

export interface DeviceState {
  product: string;
  version: string;
  pending_updates: PendingUpdate[];
  reboot_required: boolean;
  last_reboot_at: string;
  reboot_count: number;
  guests: Guest[];
  vpn: {
    /** Detected public address of the default-route interface. */
    wan_address: string;
    wan_interface: string;
    reload_count: number;
    last_reload_at: string | null;
    servers: VpnServer[];
  };
  /** What the simulated configuration changed since shipping (config-drift.ts); absent until it first does. */
  config_changes?: ConfigChanges;
}

export interface ConfigChanges {
  revision: number;
  timezone: string;
  /** Filter rules added, oldest first (at most a few are kept). */
  rules: Array<{ uuid: string; descr: string; source: string }>;
}

/** The device as `DeviceStateStore.device` hands it out: the current state itself, frozen. */
export type DeviceView = DeepReadonly<DeviceState>;
type DeepReadonly<T> = T extends (infer U)[] ? ReadonlyArray<DeepReadonly<U>> : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

export interface AgentStateFile {
  version: 1;
  agent_id: string | null;
  device: DeviceState;
}

const PRODUCTS: Record<Platform, { product: string; version: string; wan: string; updates: PendingUpdate[] }> = {
  freebsd: {
    product: 'OPNsense',
    version: '25.1.3',
    wan: 'igc0',
    updates: [
      { name: 'opnsense', current: '25.1.3', new: '25.1.4', security: false, core: true },
      { name: 'openssl', current: '3.0.15', new: '3.0.16', security: true },
      { name: 'unbound', current: '1.22.0', new: '1.22.1', security: true },
    ],
  },
  linux: {
    product: 'Proxmox VE',
    version: '9.1.1',
    wan: 'vmbr0',
    updates: [
      { name: 'pve-manager', current: '9.1.1', new: '9.1.2', security: false, core: true },
      { name: 'openssl', current: '3.5.1-1', new: '3.5.1-1+deb13u1', security: true },
      { name: 'proxmox-kernel-6.17', current: '6.17.2-1', new: '6.17.2-2', security: false },
    ],
  },
  windows: {
    product: 'Windows Server 2022',
    version: '10.0.20348.2849',
    wan: 'Ethernet0',
    updates: [
      { name: 'Cumulative Update KB5048654', current: '10.0.20348.2849', new: '10.0.20348.2966', security: true, core: true },
      { name: 'Microsoft Defender Antivirus platform', current: '4.18.24090.11', new: '4.18.24100.9', security: false },
    ],
  },
};

/** A fresh device as shipped: a few pending updates, five guests and one WireGuard server. */
/**
 * A WireGuard peer the device starts with, as a firewall reports it (the fleet's profiles carry 25):
 * written into the fresh device, so its peer commands and its heartbeats know the same peers and a new
 * peer gets an address none of them uses.
 */
export type SeedPeer = Pick<VpnPeer, 'uuid' | 'name' | 'tunnel_address' | 'public_key' | 'endpoint'>;

/** The one WireGuard server a fresh simulated device has (OPNsense's usual name for it). */
const VPN_SERVER = 'ALWAYSON_VPN';

export function defaultDeviceState(platform: Platform, node: string, now: Date, seedPeers: readonly SeedPeer[] = []): DeviceState {
  const product = PRODUCTS[platform];
  const keys = generateWireGuardKeyPair();
  const guest = (vmid: number, name: string, type: GuestType, status: GuestStatus): Guest => ({ vmid, name, type, status, node });
  return {
    product: product.product,
    version: product.version,
    pending_updates: product.updates.map((u) => ({ ...u })),
    reboot_required: false,
    last_reboot_at: now.toISOString(),
    reboot_count: 0,
    guests: [
      guest(100, 'vm-dc-0', 'vm', 'running'),
      guest(101, 'vm-file-1', 'vm', 'stopped'),
      guest(102, 'vm-sql-2', 'vm', 'running'),
      guest(200, 'ct-dns-0', 'container', 'running'),
      guest(201, 'ct-proxy-1', 'container', 'stopped'),
    ],
    vpn: {
      wan_address: '203.0.113.10',
      wan_interface: product.wan,
      reload_count: 0,
      last_reload_at: null,
      servers: [
        {
          uuid: randomUUID(),
          name: VPN_SERVER,
          address: '10.200.0.1/24',
          listen_port: 51820,
          public_key: keys.publicKey,
          private_key: keys.privateKey,
          peers: seedPeers.map((p) => ({ ...p, server_name: VPN_SERVER, allowed_ips: '0.0.0.0/0, ::/0', dns: null, created_at: now.toISOString() })),
        },
      ],
    },
  };
}

export interface DeviceStateOptions {
  platform: Platform;
  /** Hypervisor node name of the simulated guests (usually the hostname). */
  node: string;
  now?: () => Date;
  /** WireGuard peers a fresh device starts with (ignored when the state file exists). */
  seedPeers?: readonly SeedPeer[];
}

export class DeviceStateStore {
  private current: AgentStateFile;
  private writes: Promise<void> = Promise.resolve();
  private writeSeq = 0;

  private constructor(
    readonly file: string,
    initial: AgentStateFile,
  ) {
    this.current = { ...initial, device: deepFreeze(initial.device) };
  }

  /** Loads the file, or creates it with a fresh device when it does not exist yet. */
  static async open(file: string, options: DeviceStateOptions): Promise<DeviceStateStore> {
    let text: string | null = null;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text !== null) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error(`state file ${file} is not valid JSON; move it away to start with a fresh device`);
      }
      if (!isStateFile(parsed)) throw new Error(`state file ${file} is not an agent state file`);
      return new DeviceStateStore(file, parsed);
    }
    const now = (options.now ?? (() => new Date()))();
    const store = new DeviceStateStore(file, { version: 1, agent_id: null, device: defaultDeviceState(options.platform, options.node, now, options.seedPeers) });
    await store.persist();
    return store;
  }

  get agentId(): string | null {
    return this.current.agent_id;
  }

  /**
   * The state itself, frozen: callers cannot change it except through update(). No copy, because every
   * heartbeat reads it (10,000 fleet agents once a minute), while update() runs only on commands.
   */
  get device(): DeviceView {
    return this.current.device;
  }

  async setAgentId(agentId: string): Promise<void> {
    if (this.current.agent_id === agentId) return;
    this.current = { ...this.current, agent_id: agentId };
    await this.persist();
  }

  /**
   * Applies `change` to a copy of the device and, when it returns without throwing, makes the copy the
   * state and writes it. A throwing change leaves state and file untouched.
   */
  async update<T>(change: (device: DeviceState) => T): Promise<T> {
    const draft = structuredClone(this.current.device);
    const result = change(draft);
    this.current = { ...this.current, device: deepFreeze(draft) };
    await this.persist();
    return result;
  }

  /** Resolves once every write started so far has reached the file. */
  async flush(): Promise<void> {
    await this.writes.catch(() => undefined);
  }

  private persist(): Promise<void> {
    const text = `${JSON.stringify(this.current, null, 2)}\n`;
    const tmp = `${this.file}.${process.pid}.${++this.writeSeq}.tmp`;
    const write = this.writes.catch(() => undefined).then(async () => {
      await writeFile(tmp, text, { mode: 0o600 });
      await rename(tmp, this.file);
    });
    this.writes = write;
    return write;
  }
}

function isStateFile(value: unknown): value is AgentStateFile {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<AgentStateFile>;
  return v.version === 1 && typeof v.device === 'object' && v.device !== null && Array.isArray(v.device.guests) && Array.isArray(v.device.vpn?.servers);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
