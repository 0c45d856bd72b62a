// A small read-only file tree for each simulated device of the fleet (issue 59): fs_list, fs_stat and
// fs_read answer from it (a read streams the file's bytes in the session's frames like a real agent's),
// anything that would change it is refused as a demo device's. Errors begin with the prefixes the
// server maps to statuses (docs/device-files.md: `not found:`, `invalid path:`, `permission denied:`). The tree is per platform and shared;
// only the host name inside a few files is the agent's own.
import { createHash } from 'node:crypto';
import type { Platform } from '../agent/device-state.js';
import { CommandError, type CommandTable } from '../agent/commands/types.js';
import { FS_LIST_MAX_LIMIT, type FileEntry } from '../modules/agent-hub/device-protocol.js';

const READ_ONLY = 'permission denied: a read-only demo device (the simulated file tree cannot be changed)';
const MODIFIED = '2026-11-02T08:15:00.000Z';

/** Files by path (directories are implied by them), with `{host}` for the device's host name. */
const TREES: Record<Platform, Record<string, string>> = {
  freebsd: {
    '/conf/config.xml': '<?xml version="1.0"?>\n<opnsense>\n  <system>\n    <hostname>{host}</hostname>\n  </system>\n</opnsense>\n',
    '/etc/rc.conf': 'hostname="{host}"\nsshd_enable="YES"\nunbound_enable="YES"\nntpd_enable="YES"\n',
    '/etc/hosts': '127.0.0.1\tlocalhost {host}\n::1\tlocalhost {host}\n',
    '/var/log/system.log': '<13>1 2026-11-29T08:00:01+00:00 {host} cron 4711 - [meta sequenceId="1"] (root) CMD (/usr/local/sbin/configctl -d syslog archive)\n',
    '/var/log/filter.log': '<134>1 2026-11-29T08:00:02+00:00 {host} filterlog 612 - [meta sequenceId="2"] 77,,,0,igb0,match,block,in,4,0x0,,64,0,0,DF,6,tcp,60,198.51.100.7,203.0.113.10,51234,22,0,S\n',
    '/usr/local/etc/rmm-agent.conf': 'server = https://rmm.example\n',
    '/root/.profile': 'PATH=/sbin:/bin:/usr/sbin:/usr/bin:/usr/local/sbin:/usr/local/bin\nexport PATH\n',
  },
  linux: {
    '/etc/hostname': '{host}\n',
    '/etc/hosts': '127.0.0.1 localhost\n192.0.2.10 {host}.lan {host}\n',
    '/etc/pve/storage.cfg': 'dir: local\n\tpath /var/lib/vz\n\tcontent iso,vztmpl,backup\n\nzfspool: local-zfs\n\tpool rpool/data\n\tcontent images,rootdir\n',
    '/etc/pve/qemu-server/101.conf': 'name: web-01\ncores: 4\nmemory: 8192\nnet0: virtio=BC:24:11:00:01:01,bridge=vmbr0\n',
    '/etc/pve/qemu-server/102.conf': 'name: db-01\ncores: 8\nmemory: 16384\nnet0: virtio=BC:24:11:00:01:02,bridge=vmbr0\n',
    '/var/log/syslog': '2026-11-29T08:00:01.000000+00:00 {host} pvestatd[1234]: status update time (5.1 seconds)\n',
    '/root/notes.txt': 'Maintenance window: Sundays 02:00-04:00.\n',
  },
  windows: {
    'C:/Windows/System32/drivers/etc/hosts': '127.0.0.1       localhost\r\n::1             localhost\r\n',
    'C:/ProgramData/RMM Agent/agent.log': '2026-11-29 08:00:00 INFO connected to https://rmm.example as {host}\r\n',
    'C:/Users/Public/Documents/readme.txt': 'Shared documents of {host}.\r\n',
    'C:/Users/jdoe/Desktop/todo.txt': 'Call the printer vendor.\r\n',
  },
};

/** The path as a key of the tree: '/' separators, no trailing one, no '.' or '..' components. */
function keyOf(platform: Platform, path: string): string {
  if (path.includes('\0')) throw new CommandError('invalid path: contains a NUL byte');
  const parts = path.replace(/\\/g, '/').split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new CommandError('invalid path: ".." is not allowed');
  if (platform === 'windows') {
    const drive = /^[A-Za-z]:$/.test(parts[0] ?? '') ? parts.shift()!.toUpperCase() : null;
    if (!drive) throw new CommandError(`invalid path: ${JSON.stringify(path)} has no drive (a Windows path starts with C:\\)`);
    return [drive, ...parts].join('/');
  }
  if (!path.startsWith('/')) throw new CommandError(`invalid path: ${JSON.stringify(path)} is not absolute`);
  return `/${parts.join('/')}`;
}

const shown = (platform: Platform, key: string) => (platform === 'windows' ? (key.includes('/') ? key.replace(/\//g, '\\') : `${key}\\`) : key);

class SimulatedTree {
  private readonly files = new Map<string, Buffer>();
  private readonly dirs = new Map<string, Set<string>>();

  constructor(readonly platform: Platform, hostname: string) {
    const root = platform === 'windows' ? 'C:' : '/';
    this.dirs.set(root, new Set());
    for (const [path, text] of Object.entries(TREES[platform])) {
      this.files.set(path, Buffer.from(text.replaceAll('{host}', hostname)));
      let child = path;
      for (let parent = parentOf(child); parent !== null; child = parent, parent = parentOf(parent)) {
        if (!this.dirs.has(parent)) this.dirs.set(parent, new Set());
        this.dirs.get(parent)!.add(child.slice(child.lastIndexOf('/') + 1));
      }
    }
  }

  entry(key: string): FileEntry | null {
    const name = key.slice(key.lastIndexOf('/') + 1) || key;
    const file = this.files.get(key);
    if (file) return { name, type: 'file', size: file.length, modified_at: MODIFIED, mode: this.platform === 'windows' ? null : '0644', link_target: null };
    if (this.dirs.has(key)) return { name, type: 'dir', size: 0, modified_at: MODIFIED, mode: this.platform === 'windows' ? null : '0755', link_target: null };
    return null;
  }

  list(key: string): FileEntry[] {
    const names = this.dirs.get(key);
    if (!names) throw new CommandError(this.files.has(key) ? `not a directory: ${shown(this.platform, key)}` : `not found: ${shown(this.platform, key)}`);
    const base = key === '/' ? '' : key;
    return [...names].sort().map((n) => this.entry(`${base}/${n}`)!);
  }

  read(key: string): Buffer {
    const file = this.files.get(key);
    if (!file) throw new CommandError(this.dirs.has(key) ? `is a directory: ${shown(this.platform, key)}` : `not found: ${shown(this.platform, key)}`);
    return file;
  }
}

function parentOf(key: string): string | null {
  const cut = key.lastIndexOf('/');
  if (cut < 0) return null;
  return cut === 0 ? (key === '/' ? null : '/') : key.slice(0, cut);
}

export function simulatedFileHandlers(platform: Platform, hostname: string): Partial<CommandTable> {
  let tree: SimulatedTree | null = null;
  const get = () => (tree ??= new SimulatedTree(platform, hostname));
  const refuse = async () => {
    throw new CommandError(READ_ONLY);
  };
  return {
    fs_list: async ({ path, cursor, limit = FS_LIST_MAX_LIMIT }) => {
      const key = keyOf(platform, path);
      const all = get().list(key);
      const from = cursor ? all.findIndex((e) => e.name > cursor) : 0;
      const entries = from < 0 ? [] : all.slice(from, from + limit);
      const last = entries.at(-1);
      return { path: shown(platform, key), entries, next_cursor: last && from + limit < all.length ? last.name : null, total: all.length };
    },
    fs_stat: async ({ path }) => {
      const key = keyOf(platform, path);
      const entry = get().entry(key);
      if (!entry) throw new CommandError(`not found: ${shown(platform, key)}`);
      return { ...entry, path: shown(platform, key) };
    },
    fs_read: async ({ session_id, path, offset = 0 }, ctx) => {
      const file = get().read(keyOf(platform, path));
      const bytes = file.subarray(Math.min(offset, file.length));
      if (!ctx.streams) throw new CommandError('file transfers are not available on this connection');
      await ctx.streams.open(session_id, async (port) => {
        let sent = false;
        let held = false;
        let gone = false;
        const send = () => {
          if (sent || held || gone) return;
          sent = true;
          if (bytes.length > 0) port.send(bytes);
          port.close({ bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
        };
        // After the answer: no frame may precede it.
        setImmediate(send);
        return {
          data: () => undefined,
          pause: () => void (held = true),
          resume: () => {
            held = false;
            setImmediate(send);
          },
          destroy: () => void (gone = true),
        };
      });
      return { size: file.length, modified_at: MODIFIED };
    },
    fs_write: refuse,
    fs_mkdir: refuse,
    fs_rename: refuse,
    fs_delete: refuse,
    fs_cancel: async ({ session_id }, ctx) => {
      ctx.streams?.end(session_id);
      return {};
    },
  };
}
