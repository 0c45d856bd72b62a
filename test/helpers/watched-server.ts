// A spawned server that a test drives through trouble (its database restarting, failing over): every
// wait fails at once, with the server's last words, once the process is gone, instead of timing out.
import { spawnServer, type ServerProcess } from './spawn-server.js';

export interface WatchedServer {
  readonly process: ServerProcess;
  /** http://127.0.0.1:<port> (the server must be listening). */
  readonly base: string;
  /** Whether the process has exited. */
  exited(): boolean;
  /** Throws with the server's last log lines when the process has exited. */
  assertAlive(): void;
  /** Polls `condition` every 200 ms (generous deadline: two busy shared cores), failing early if the server died. */
  until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs?: number): Promise<void>;
  /** A JSON call to the API; throws with the status and body on anything but 2xx. */
  api<T>(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<T>;
  /** Kills it (SIGKILL) unless it has exited, and waits for the exit: for afterAll. */
  kill(): Promise<void>;
}

/** Starts the server with `env` and resolves once it listens. */
export async function startWatchedServer(env: Record<string, string>, defaultTimeoutMs?: number): Promise<WatchedServer> {
  const watched = watchServer(spawnServer(env), defaultTimeoutMs);
  await watched.process.listening;
  return watched;
}

export function watchServer(server: ServerProcess, defaultTimeoutMs = 45_000): WatchedServer {
  let exitCode: number | null | undefined;
  void server.exited.then((code) => (exitCode = code));
  const base = () => `http://127.0.0.1:${server.port}`;
  const assertAlive = () => {
    if (exitCode !== undefined) throw new Error(`the server exited (code ${exitCode}):\n${[...server.stdout, ...server.stderr].slice(-25).join('\n')}`);
  };
  return {
    process: server,
    get base() {
      return base();
    },
    exited: () => exitCode !== undefined,
    assertAlive,
    async until(what, condition, timeoutMs = defaultTimeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        assertAlive();
        if (await condition()) return;
        if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async kill() {
      if (exitCode !== undefined) return;
      server.kill('SIGKILL');
      await server.exited;
    },
    async api<T>(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<T> {
      const res = await fetch(`${base()}/api/v1${url}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
      return JSON.parse(text) as T;
    },
  };
}
