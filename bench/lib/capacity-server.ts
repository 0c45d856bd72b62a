// The server capacity.ts measures, as users run it: the built output (bench/lib/built-server.ts, its
// production Node flags, log level `info`) in a process of its own, on a fresh PGlite data directory
// (PGlite's default buffer pool, as installed) or a fresh PostgreSQL database. Everything is read from
// outside: CPU and resident memory from /proc, the V8 heap and the heartbeats from its Prometheus
// endpoint, the agents' traffic at a relay in front of it, and the database's sizes and WAL over a
// connection of the bench's own (PostgreSQL) or from the files (PGlite, which the server holds alone).
// The admin and the fleet's agent key are made through the HTTP API, as an operator would.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openPglite, openPostgres, type DbHandle } from '../../src/db/create-db.js';
import { createLogger } from '../../src/platform/logger.js';
import { createDatabase, dropDatabase, withDatabase } from '../../test/helpers/postgres-admin.js';
import { buildIfStale, residentMiB, startBuiltServer, type BuiltServer } from './built-server.js';
import { readStorage, type Storage, type Traffic } from './capacity-probes.js';
import { makeKeys, pidCpuMs } from './cluster-processes.js';
import { countingProxy, type CountingProxy } from './counting-proxy.js';
import { postgresAdminUrl, type Backend } from './databases.js';
import { readBackendTicks, type BackendTicks } from './pg-backend-cpu.js';
import { pgliteFileMap, readPgliteFiles, type PgliteFileMap } from './pglite-files.js';
import { scrapeFigures, type Scrape } from './prometheus-scrape.js';

const PASSWORD = 'bench-capacity-password';

export interface CapacityServer {
  /** The relay's URL: where the fleet connects. */
  url: string;
  apiKey: string;
  /** Where the data lives, for the log. */
  location: string;
  /** User + system CPU of the server process so far, in ms, and when it was read. */
  cpu(): Promise<{ cpuMs: number; atMs: number }>;
  rssBytes(): Promise<number>;
  scrape(): Promise<Scrape>;
  traffic(): Traffic;
  storage(): Promise<Storage>;
  /** CPU ticks of PostgreSQL's backends serving the server (the bench's own connection left out); undefined on PGlite. */
  backendTicks(): Promise<BackendTicks | undefined>;
  /** For what only SQL tells: on PGlite this stops the server first (it holds the database alone); on PostgreSQL a connection beside it. */
  database(): Promise<DbHandle>;
  /** Stops everything and removes the data. */
  close(): Promise<void>;
}

export async function startCapacityServer(backend: Backend, env: NodeJS.ProcessEnv): Promise<CapacityServer> {
  buildIfStale();
  // Prometheus's way in: the bearer token of METRICS_TOKEN (without it /metrics answers loopback alone).
  const metricsToken = randomBytes(24).toString('base64url');
  const cleanups: Array<() => Promise<void>> = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => undefined);
  };
  try {
    // The server's own directory (its secrets; on PGlite its database too), new as on a new install.
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-capacity-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const serverEnv: Record<string, string> = { DATA_DIR: dataDir };
    const pgliteDir = backend === 'pglite' ? path.join(dataDir, 'pglite') : undefined;
    let bench: DbHandle | undefined;
    if (backend === 'postgres') {
      const admin = await postgresAdminUrl(env);
      if (!admin.url) throw new Error(`skipped: ${admin.reason}`);
      const adminUrl = admin.url;
      // Empty: the server migrates it at its start, as on a new install.
      const name = await createDatabase({ adminUrl, prefix: `rmm_bench_${process.pid}` });
      cleanups.push(() => dropDatabase(adminUrl, name));
      serverEnv.DATABASE_URL = withDatabase(adminUrl, name);
    }
    const start = () => startBuiltServer({ ...serverEnv, ADMIN_PASSWORD: PASSWORD, METRICS_TOKEN: metricsToken });
    let server: BuiltServer = await start();
    cleanups.push(() => server.stop());
    let files: PgliteFileMap | undefined;
    if (pgliteDir) {
      // The first start fills the database; which files are the metric tables' is read with it stopped, then it starts again.
      await server.stop();
      const handle = await openPglite({ dataDir: pgliteDir });
      files = await pgliteFileMap(handle).finally(() => handle.close());
      server = await start();
    } else {
      bench = openPostgres(serverEnv.DATABASE_URL!, createLogger({ level: 'silent' }), { max: 1 });
      const handle = bench;
      cleanups.push(() => handle.close());
    }
    const running = server;
    const proxy: CountingProxy = await countingProxy(server.url);
    cleanups.push(() => proxy.close());
    const { agent } = await makeKeys(`${server.url}/api/v1`, PASSWORD);
    const pid = server.child.pid!;
    let afterStop: DbHandle | undefined;
    return {
      url: proxy.url,
      apiKey: agent,
      location: pgliteDir ? `embedded PGlite in ${pgliteDir} (${env.PGLITE_SHARED_BUFFERS_MB ? `PGLITE_SHARED_BUFFERS_MB=${env.PGLITE_SHARED_BUFFERS_MB}` : 'the default buffer pool'})` : `PostgreSQL ${new URL(serverEnv.DATABASE_URL!).pathname.slice(1)}`,
      cpu: async () => ({ cpuMs: await pidCpuMs(pid), atMs: performance.now() }),
      rssBytes: async () => (await residentMiB(pid)).rss * 2 ** 20,
      scrape: () => scrapeFigures(`${running.url}/metrics`, metricsToken),
      traffic: () => proxy.traffic(),
      storage: () => (bench ? readStorage(bench) : readPgliteFiles(pgliteDir!, files!)),
      backendTicks: async () => (bench ? readBackendTicks(bench.db, { leaveOutOwn: true }) : undefined),
      database: async () => {
        if (bench) return bench;
        await running.stop();
        if (!afterStop) {
          const handle = await openPglite({ dataDir: pgliteDir! });
          cleanups.push(() => handle.close());
          afterStop = handle;
        }
        return afterStop;
      },
      close: cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
