// PostgreSQL restarting under load (issue 29, item 1): 200 agents heartbeat every 1–2 s over real HTTP
// and hold their sockets, and a few console readers ask for agents, while the test's own PostgreSQL
// cluster is restarted three times, then stopped for a while and started again. The server must stay
// up, answer 503 in the contract's body while the database is away (never 500), find its way back
// without help, and have stored every heartbeat it answered 200.
//
// The server runs as a process (spawnServer): an unhandled 'error' event on a pg client kills the
// process, which is what operators saw, and the load generator gets the other core instead of sharing
// the server's event loop. The cluster is the test's own, so this runs on both test passes.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeartbeatLoad } from './helpers/heartbeat-load.js';
import { createPgCluster, postgresBinDir, type PgCluster } from './helpers/pg-cluster.js';
import { PROCESS_TEST_TIMEOUT_MS } from './helpers/spawn-server.js';
import { startWatchedServer, type WatchedServer } from './helpers/watched-server.js';

const AGENTS = 200;
const ADMIN_PASSWORD = 'restart-test-password';
const binDir = postgresBinDir();
const title = binDir
  ? 'a PostgreSQL restart under heartbeat load'
  : 'a PostgreSQL restart under heartbeat load (skipped: no PostgreSQL binaries under /usr/lib/postgresql; set PG_BIN_DIR)';

describe.skipIf(!binDir)(title, () => {
  let cluster: PgCluster | undefined;
  let watched: WatchedServer | undefined;
  let dataDir: string | undefined;
  let base = '';
  let load: HeartbeatLoad | undefined;

  beforeAll(async () => {
    cluster = await createPgCluster(binDir!);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-pgrestart-'));
    watched = await startWatchedServer({ DATA_DIR: dataDir, DATABASE_URL: cluster.url, ADMIN_PASSWORD });
    base = watched.base;
  }, PROCESS_TEST_TIMEOUT_MS);

  afterAll(async () => {
    await load?.close();
    await watched?.kill();
    await cluster?.remove();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, PROCESS_TEST_TIMEOUT_MS);

  async function readyz(): Promise<number> {
    watched!.assertAlive();
    try {
      return (await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) })).status;
    } catch {
      watched!.assertAlive();
      return 0;
    }
  }

  it('keeps serving, answers 503 while the database is away, recovers by itself and loses nothing acknowledged', async () => {
    const { token } = await watched!.api<{ token: string }>('POST', '/auth/login', {}, { username: 'admin', password: ADMIN_PASSWORD });
    const admin = { authorization: `Bearer ${token}` };
    const { key } = await watched!.api<{ key: string }>('POST', '/apikeys', admin, { name: 'restart load', permissions: 'agent' });
    // Kept where afterAll can close it, should an assertion fail first.
    const beats = (load = await HeartbeatLoad.connect(base, key, AGENTS));
    beats.start();
    beats.startReaders(admin, 8);
    const started = performance.now();
    await watched!.until('every agent had a heartbeat stored', () => beats.allAckedSince(started));

    // 1. The restart of the report: a fast shutdown ends every connection with 57P01 mid-load. The
    // crash depended on a client being checked out at that instant (6 runs of 7), so three times.
    for (let restart = 1; restart <= 3; restart++) {
      await cluster!.restart();
      const restarted = performance.now();
      await watched!.until(`/readyz is 200 again after restart ${restart}`, async () => (await readyz()) === 200);
      await watched!.until(`every agent had a heartbeat stored after restart ${restart}`, () => beats.allAckedSince(restarted));
    }

    // 2. The database away for a while: heartbeats and /readyz answer 503 until it is back.
    await cluster!.stop();
    const stopped = performance.now();
    await watched!.until('/readyz is 503 while the database is down', async () => (await readyz()) === 503);
    // Down long enough for most agents to be refused once (counted, not timed: the cores are busy).
    await watched!.until('heartbeats are refused while the database is down', () => beats.answersSince(stopped).filter((a) => a.status === 503).length >= AGENTS / 2);
    await cluster!.start();
    const back = performance.now();
    await watched!.until('/readyz is 200 again without intervention', async () => (await readyz()) === 200);
    const readyAfterMs = performance.now() - back;
    await watched!.until('every agent had a heartbeat stored after the outage', () => beats.allAckedSince(back));
    await beats.stop();

    watched!.assertAlive();
    expect(beats.transportErrors).toEqual([]);
    const statuses = new Set(beats.answers.map((a) => a.status));
    expect([...statuses].sort()).toEqual([200, 503]);
    expect(new Set(beats.reads.map((a) => a.status))).toEqual(new Set([200, 503]));
    for (const refused of [...beats.answers, ...beats.reads].filter((a) => a.status !== 200)) {
      expect(JSON.parse(refused.body)).toEqual({
        error: expect.any(String),
        code: expect.stringMatching(/^(DATABASE_UNAVAILABLE|SERVICE_UNAVAILABLE)$/),
        request_id: expect.any(String),
      });
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    }

    // Every heartbeat answered 200 is stored: its number is among the agent's uptime samples.
    const lost: string[] = [];
    let stored = 0;
    for (const agent of beats.agents) {
      const samples = await watched!.api<Array<{ value: number }>>('GET', `/agents/${agent.id}/metrics?metric=uptime_seconds&limit=100000`, admin);
      const values = new Set(samples.map((s) => s.value));
      stored += values.size;
      for (const seq of agent.acked) if (!values.has(seq)) lost.push(`${agent.id} #${seq}`);
    }
    const acked = beats.agents.reduce((n, a) => n + a.acked.length, 0);
    expect(lost, `${lost.length} of ${acked} acknowledged heartbeats are missing`).toEqual([]);
    expect(stored).toBeGreaterThanOrEqual(acked);

    // The agents' sockets outlived both: none was closed, and the server still counts all as connected.
    expect(beats.agents.filter((a) => a.closedWith !== undefined).map((a) => a.closedWith)).toEqual([]);
    const connected = await Promise.all(beats.agents.map((a) => watched!.api<{ connected: boolean }>('GET', `/agents/${a.id}`, admin)));
    expect(connected.filter((a) => !a.connected)).toHaveLength(0);
    expect(await readyz()).toBe(200);

    // The log tells the operator what happened without a line per refused request (there were hundreds).
    const refused = [...beats.answers, ...beats.reads].filter((a) => a.status === 503).length;
    const warnings = watched!.process.stdout.filter((line) => /"level":(40|50|60)/.test(line));
    expect(warnings.some((line) => line.includes('PostgreSQL connection lost'))).toBe(true);
    expect(warnings.length).toBeLessThan(30);
    // The figures the issue asks for, in the test's output.
    console.info(
      `postgres-restart: ${acked} heartbeats acknowledged, ${stored} stored, ${lost.length} lost; ${refused} requests answered 503 ` +
        `(${beats.answers.filter((a) => a.status === 503).length} heartbeats); /readyz 200 again ${Math.round(readyAfterMs)} ms after the start; ` +
        `${AGENTS} sockets still open; ${warnings.length} warning lines logged`,
    );
  }, PROCESS_TEST_TIMEOUT_MS);
});
