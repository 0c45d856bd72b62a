// The documented HAProxy configuration (deploy/haproxy/haproxy.cfg), rendered for a test: only where it
// listens and where its servers are change, so a cluster test proves the file operators copy works.
// Also reads HAProxy's view of its servers (UP/DOWN) from its stats socket, so tests can wait for a health
// check's verdict instead of sleeping.
import net from 'node:net';

export interface HaproxyBackend {
  /** The server's name in HAProxy (rmm-a, rmm-b, ...). */
  name: string;
  /** Its port on 127.0.0.1. */
  port: number;
}

export interface RenderOptions {
  /** The frontend listens here (127.0.0.1). */
  bindPort: number;
  backends: readonly HaproxyBackend[];
  /** Admin socket for serverStates() (added to `global`; the file itself has none). */
  statsSocket: string;
  /**
   * `timeout <name>` values to replace in `defaults`, for a test that must see a timeout pass within
   * seconds (e.g. { client: '1s' }). Only names the file sets may be given.
   */
  timeouts?: Readonly<Record<string, string>>;
}

/**
 * The file with its `bind` lines on 127.0.0.1:bindPort and, in every backend, one `server` line per given
 * backend, keeping the options of the file's first server line there (checks, on-marked-down, ...).
 */
export function renderHaproxyConfig(text: string, options: RenderOptions): string {
  const lines = text.split('\n');
  const out: string[] = [];
  const timeouts = new Map(Object.entries(options.timeouts ?? {}));
  let section = '';
  let serversWritten = false;
  for (const line of lines) {
    const code = line.replace(/#.*/, '').trim();
    if (/^\S/.test(line) && code !== '') {
      section = code.split(/\s+/)[0] ?? '';
      serversWritten = false;
    }
    const [keyword, ...args] = code.split(/\s+/);
    if (section === 'frontend' && keyword === 'bind') {
      out.push(`    bind 127.0.0.1:${options.bindPort}`);
    } else if (section === 'backend' && keyword === 'server') {
      if (serversWritten) continue;
      serversWritten = true;
      // server <name> <address> [options...]
      const serverOptions = args.slice(2).join(' ');
      for (const b of options.backends) out.push(`    server ${b.name} 127.0.0.1:${b.port}${serverOptions ? ` ${serverOptions}` : ''}`);
    } else if (section === 'defaults' && keyword === 'timeout' && args[0] !== undefined && timeouts.has(args[0])) {
      out.push(`    timeout ${args[0]} ${timeouts.get(args[0])}`);
      timeouts.delete(args[0]);
    } else {
      out.push(line);
      if (section === 'global' && code === 'global') out.push(`    stats socket ${options.statsSocket} mode 600 level admin`);
    }
  }
  if (timeouts.size > 0) throw new Error(`haproxy.cfg sets no timeout ${[...timeouts.keys()].join(', ')} in defaults`);
  if (!out.some((l) => /^\s+bind 127\.0\.0\.1:/.test(l))) throw new Error('haproxy.cfg has no frontend bind line to replace');
  if (!out.some((l) => /^\s+server /.test(l))) throw new Error('haproxy.cfg has no backend server lines to replace');
  return out.join('\n');
}

export interface ServerState {
  backend: string;
  server: string;
  /** HAProxy's status: UP, DOWN, "UP 1/2" (going down), "DOWN 1/2" (going up), MAINT, no check. */
  status: string;
}

/** Sends one command to HAProxy's admin socket and returns its whole answer. */
export function haproxyCommand(socketPath: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(socketPath, () => socket.end(`${command}\n`));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** HAProxy's `show stat` as one record per line (frontends, backends and servers), keyed by its CSV header. */
export async function showStat(socketPath: string): Promise<Array<Record<string, string>>> {
  const csv = await haproxyCommand(socketPath, 'show stat');
  const [header, ...rows] = csv.split('\n').filter((l) => l.trim() !== '');
  const columns = (header ?? '').replace(/^#\s*/, '').split(',');
  return rows.map((row) => {
    const fields = row.split(',');
    return Object.fromEntries(columns.map((name, i) => [name, fields[i] ?? '']));
  });
}

/** Every backend server as HAProxy sees it now (`show stat`). */
export async function serverStates(socketPath: string): Promise<ServerState[]> {
  return (await showStat(socketPath))
    .filter((f) => f.svname !== 'FRONTEND' && f.svname !== 'BACKEND')
    .map((f) => ({ backend: f.pxname ?? '', server: f.svname ?? '', status: f.status ?? '' }));
}
