// A PostgreSQL primary failover behind HAProxy (issue 57, item 14): a primary and its streaming standby
// of the test's own, deploy/haproxy/postgres.cfg in front (pgsql-check, the standby as backup), the server
// as a process on HAProxy's port, and 50 agents heartbeating every 1–2 s with a few console readers. The
// primary stops; HAProxy sends new connections to the standby, still read-only ("cannot execute UPDATE in
// a read-only transaction", SQLSTATE 25006); it is promoted once the server has met it read-only. The
// server must answer 503 with Retry-After meanwhile (never 500), log it as an outage (warn lines, no
// error line, no stack trace), come back by itself, and have stored every heartbeat it answered 200.
//
// The clusters are the test's own, so this runs on both test passes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTool, freePort, probeTcp } from './helpers/cluster-rig.js';
import { HeartbeatLoad } from './helpers/heartbeat-load.js';
import { createPgCluster, createStandby, postgresBinDir, type PgCluster, type PgStandby } from './helpers/pg-cluster.js';
import { PROCESS_TEST_TIMEOUT_MS, ROOT } from './helpers/spawn-server.js';
import { startWatchedServer, type WatchedServer } from './helpers/watched-server.js';

const AGENTS = 50;
const ADMIN_PASSWORD = 'failover-test-password';
const binDir = postgresBinDir();
const haproxyBinary = findTool('haproxy');
const skip = !binDir || !haproxyBinary;
const title = skip ? 'a PostgreSQL failover behind HAProxy (skipped: needs PostgreSQL binaries and haproxy)' : 'a PostgreSQL failover behind HAProxy';

interface LogLine {
  level: number;
  msg: string;
  err?: { stack?: string; code?: string };
  error?: { code?: string; message?: string };
}

/** deploy/haproxy/postgres.cfg with its bind and server addresses on 127.0.0.1, nothing else changed. */
async function renderPostgresHaproxy(port: number, primary: number, standby: number): Promise<string> {
  const text = await readFile(path.join(ROOT, 'deploy/haproxy/postgres.cfg'), 'utf8');
  const rendered = text
    .replace(/^(\s+)bind :5433$/m, `$1bind 127.0.0.1:${port}`)
    .replace(/^(\s+server pg-primary )\S+/m, `$1127.0.0.1:${primary}`)
    .replace(/^(\s+server pg-standby )\S+/m, `$1127.0.0.1:${standby}`);
  expect(rendered.match(/127\.0\.0\.1:\d+/g)).toHaveLength(3);
  return rendered;
}

describe.skipIf(skip)(title, () => {
  let primary: PgCluster | undefined;
  let standby: PgStandby | undefined;
  let haproxy: ChildProcess | undefined;
  let haproxyDir: string | undefined;
  let watched: WatchedServer | undefined;
  let dataDir: string | undefined;
  let base = '';
  let load: HeartbeatLoad | undefined;

  beforeAll(async () => {
    primary = await createPgCluster(binDir!);
    standby = await createStandby(binDir!, primary);
    haproxyDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-pg-haproxy-'));
    const port = await freePort();
    const config = path.join(haproxyDir, 'postgres.cfg');
    await writeFile(config, await renderPostgresHaproxy(port, primary.port, standby.port));
    haproxy = spawn(haproxyBinary!, ['-f', config, '-db'], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !(await probeTcp(port)); i++) await new Promise((r) => setTimeout(r, 100));
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-pgfailover-'));
    watched = await startWatchedServer({ DATA_DIR: dataDir, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`, ADMIN_PASSWORD }, 60_000);
    base = watched.base;
  }, PROCESS_TEST_TIMEOUT_MS);

  afterAll(async () => {
    await load?.close();
    await watched?.kill();
    haproxy?.kill('SIGKILL');
    await standby?.remove();
    await primary?.remove();
    for (const dir of [dataDir, haproxyDir]) if (dir) await rm(dir, { recursive: true, force: true });
  }, PROCESS_TEST_TIMEOUT_MS);

  const logLines = (): LogLine[] =>
    watched!.process.stdout.flatMap((line) => {
      try {
        return [JSON.parse(line) as LogLine];
      } catch {
        return [];
      }
    });
  const readOnlySeen = () => logLines().some((l) => (l.error ?? l.err)?.code === '25006');

  it('answers 503 while it reaches a standby not yet promoted, logs that as an outage, and loses nothing acknowledged', async () => {
    const { token } = await watched!.api<{ token: string }>('POST', '/auth/login', {}, { username: 'admin', password: ADMIN_PASSWORD });
    const admin = { authorization: `Bearer ${token}` };
    const { key } = await watched!.api<{ key: string }>('POST', '/apikeys', admin, { name: 'failover load', permissions: 'agent' });
    const beats = (load = await HeartbeatLoad.connect(base, key, AGENTS));
    beats.start();
    beats.startReaders(admin, 4);
    const started = performance.now();
    await watched!.until('every agent had a heartbeat stored', () => beats.allAckedSince(started));

    await primary!.stop();
    const stopped = performance.now();
    // HAProxy marks the primary down after two failed checks and sends new connections to the standby,
    // which refuses writes until promoted: promote it once the server has met that (the 3 s).
    await watched!.until('the server met the read-only standby', readOnlySeen);
    // Read-only long enough for most agents to be refused once (counted, not timed: the cores are busy).
    const readOnly = performance.now();
    await watched!.until('heartbeats were refused by the read-only standby', () => beats.answersSince(readOnly).filter((a) => a.status !== 200).length >= AGENTS / 2);
    await standby!.promote();
    const promoted = performance.now();
    await watched!.until('every agent had a heartbeat stored after the promotion', () => beats.allAckedSince(promoted));
    await beats.stop();

    watched!.assertAlive();
    expect(beats.transportErrors).toEqual([]);
    const during = [...beats.answers, ...beats.reads].filter((a) => a.at >= stopped);
    expect(during.filter((a) => a.status >= 500 && a.status !== 503).map((a) => `${a.status} ${a.body}`)).toEqual([]);
    const refused = during.filter((a) => a.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(JSON.parse(answer.body)).toEqual({ error: expect.any(String), code: expect.stringMatching(/^(DATABASE_UNAVAILABLE|SERVICE_UNAVAILABLE)$/), request_id: expect.any(String) });
    }
    expect(refused.filter((a) => !(Number(a.retryAfter) > 0)).map((a) => a.body)).toEqual([]);

    // Every heartbeat answered 200 is stored (read back from the promoted standby).
    const lost: string[] = [];
    for (const agent of beats.agents) {
      const samples = await watched!.api<Array<{ value: number }>>('GET', `/agents/${agent.id}/metrics?metric=uptime_seconds&limit=100000`, admin);
      const values = new Set(samples.map((s) => s.value));
      for (const seq of agent.acked) if (!values.has(seq)) lost.push(`${agent.id} #${seq}`);
    }
    const acked = beats.agents.reduce((n, a) => n + a.acked.length, 0);
    expect(lost, `${lost.length} of ${acked} acknowledged heartbeats are missing`).toEqual([]);

    // An outage in the log: warn lines, no error line and no stack trace (the issue counted 16).
    const lines = logLines();
    const errors = lines.filter((l) => l.level >= 50);
    expect(errors.map((l) => `${l.msg} ${l.err?.stack?.split('\n')[0] ?? ''}`)).toEqual([]);
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings.some((l) => l.error?.code === '25006')).toBe(true);
    expect(warnings.filter((l) => l.err !== undefined)).toEqual([]);
    expect(warnings.length).toBeLessThan(30);
    console.info(
      `postgres-failover: ${acked} heartbeats acknowledged, ${lost.length} lost; ${refused.length} requests answered 503 ` +
        `(${refused.filter((a) => beats.answers.includes(a)).length} heartbeats) over ${Math.round((promoted - stopped) / 100) / 10} s to the promotion; ` +
        `${warnings.length} warning lines, ${errors.length} error lines`,
    );
  }, 3 * PROCESS_TEST_TIMEOUT_MS);
});
