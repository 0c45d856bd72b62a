// A throw-away PostgreSQL cluster of a test's own (initdb in a temp directory, a free port on 127.0.0.1,
// its socket in that directory), for tests that stop and restart the database under a running server.
// The shared cluster on 5432 is never touched: CI and other test runs depend on it.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const run = promisify(execFile);

/** The directory of initdb/pg_ctl of the newest PostgreSQL installed, or undefined when there is none. */
export function postgresBinDir(): string | undefined {
  const fromEnv = process.env.PG_BIN_DIR;
  if (fromEnv && existsSync(path.join(fromEnv, 'pg_ctl'))) return fromEnv;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')) && existsSync(path.join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin');
}

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication; nothing else can reach it). */
  url: string;
  port: number;
  /** Fast shutdown (clients are disconnected with 57P01) and start, as `pg_ctlcluster … restart` does. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster at once and deletes its directory; safe to call twice or after a failed create. */
  remove(): Promise<void>;
}


/**
 * initdb refuses to run as root, and so does the server: as root (the CI containers), every command
 * runs as the `postgres` account, which then owns the directory.
 */
async function ownerIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = await readFile('/etc/passwd', 'utf8');
  const fields = passwd.split('\n').find((line) => line.startsWith('postgres:'))?.split(':');
  if (!fields) throw new Error('running as root, but there is no postgres account to run PostgreSQL as');
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

/** PostgreSQL's tools on a cluster directory, run as `postgres` when the tests run as root. */
function clusterTools(binDir: string, owner: { uid: number; gid: number } | undefined, data: string, logFile: string) {
  const pg = (tool: string, args: string[]) => {
    const command = owner ? ['runuser', ['-u', 'postgres', '--', path.join(binDir, tool), ...args]] : [path.join(binDir, tool), args];
    return run(command[0] as string, command[1] as string[], { timeout: 90_000 });
  };
  const pgCtl = (...args: string[]) => pg('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '60', ...args]);
  return { pg, pgCtl };
}

/** A cluster's handle over its directory; `prepare` makes the data directory (initdb, or a base backup). */
async function startCluster(binDir: string, prefix: string, prepare: (pg: ReturnType<typeof clusterTools>['pg'], data: string) => Promise<unknown>) {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  const owner = await ownerIds();
  if (owner) await chown(dir, owner.uid, owner.gid);
  const { pg, pgCtl } = clusterTools(binDir, owner, data, logFile);
  let removed = false;
  let port = 0;
  const cluster: PgCluster & { pgCtl: typeof pgCtl } = {
    get url() {
      return `postgres://postgres@127.0.0.1:${port}/postgres`;
    },
    get port() {
      return port;
    },
    restart: async () => void (await pgCtl('-m', 'fast', 'restart')),
    stop: async () => void (await pgCtl('-m', 'fast', 'stop')),
    start: async () => void (await pgCtl('start')),
    remove: async () => {
      if (removed) return;
      removed = true;
      if (existsSync(path.join(data, 'postmaster.pid'))) await pgCtl('-m', 'immediate', 'stop').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
    pgCtl,
  };
  try {
    await prepare(pg, data);
    // Another process may take the free port before the cluster binds it; then try another.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const settings = `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nmax_connections = 50\n`;
      await appendFile(path.join(data, 'postgresql.conf'), settings);
      try {
        await cluster.start();
        return cluster;
      } catch (err) {
        if (attempt >= 3) throw new Error(`the test cluster did not start: ${await readFile(logFile, 'utf8').catch(() => String(err))}`);
      }
    }
  } catch (err) {
    await cluster.remove();
    throw err;
  }
}

export async function createPgCluster(binDir: string): Promise<PgCluster> {
  // --no-sync: the cluster is thrown away; the server it runs keeps PostgreSQL's default durability.
  return startCluster(binDir, 'rmm-pgcluster-', (pg, data) => pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']));
}

export interface PgStandby extends PgCluster {
  /** Ends recovery: the standby becomes a primary that takes writes (`pg_ctl promote`). */
  promote(): Promise<void>;
}

/**
 * A hot standby of `primary`, streaming its WAL (a base backup with -R): it answers reads, and refuses
 * writes with SQLSTATE 25006 ("cannot execute … in a read-only transaction") until promoted.
 */
export async function createStandby(binDir: string, primary: PgCluster): Promise<PgStandby> {
  const standby = await startCluster(binDir, 'rmm-pgstandby-', (pg, data) =>
    pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '--no-sync']),
  );
  return Object.assign(standby, { promote: async () => void (await standby.pgCtl('promote')) });
}
