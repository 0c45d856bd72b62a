// The status monitor's one statement and a heartbeat batch lock agents' rows, each several and in no
// particular order. The monitor must never wait on a batch's row while holding a row that batch wants
// next: PostgreSQL then aborted one of them as a deadlock (the alerting bench saw heartbeats answered
// 503). The monitor skips the rows a batch holds; their agents are being heard from at that moment, and
// the next check records them.
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../src/db/create-db.js';
import { advanceStatuses } from '../src/modules/monitor/status-monitor.repo.js';
import { racingConnections, testDbKind } from './helpers/db.js';

// Two connections racing need a server; the embedded database has one connection, so nothing can race.
describe.skipIf(testDbKind() !== 'postgres')('the status monitor beside a heartbeat batch', () => {
  let connections: Awaited<ReturnType<typeof racingConnections>>;
  let monitor: DbHandle;
  let heartbeats: DbHandle;
  beforeAll(async () => {
    connections = await racingConnections();
    ({ first: monitor, second: heartbeats } = connections);
  });
  afterAll(() => connections?.close());

  it('skips the rows a heartbeat batch holds instead of deadlocking with it, and records them at the next check', async () => {
    const now = new Date();
    const silentSince = new Date(now.getTime() - 3_600_000);
    // 50 agents last heard from an hour ago and still listed online: every one changes to offline.
    const ids = Array.from({ length: 50 }, (_, i) => i.toString(16).padStart(32, '0'));
    await monitor.db
      .insertInto('agents')
      .values(ids.map((id) => ({ id, name: `fw-${id.slice(-4)}`, hostname: `fw-${id.slice(-4)}`, created_at: silentSince, last_heartbeat: silentSince, last_status: 'online' })))
      .execute();
    const [first, middle] = [ids[0]!, ids[25]!];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const holds = new Promise<void>((resolve) => (holding = resolve));
    // A heartbeat batch of two agents: the middle one's row first; the first one's row once the monitor
    // has run (the order a batch's rows are locked in is the plan's, not ours).
    const batch = heartbeats.db.transaction().execute(async (trx) => {
      await sql`update agents set last_heartbeat = ${now} where id = ${middle}`.execute(trx);
      holding();
      await released;
      await sql`update agents set last_heartbeat = ${now} where id = ${first}`.execute(trx);
    });
    await holds;
    const check = monitor.db.transaction().execute((trx) => advanceStatuses(trx, now));
    // Whatever the monitor does, it does within a moment (waiting on the middle row, it would hold the
    // first row meanwhile, and the batch's next update would close the cycle).
    await sleep(300);
    release();
    const [changed] = await Promise.all([check, batch]);
    expect(changed.map((c) => c.id).sort()).toEqual(ids.filter((id) => id !== middle));
    expect(changed.every((c) => c.status === 'offline')).toBe(true);
    // The next check: the middle agent was heard from, so it stays online and nothing changes; the first
    // agent's heartbeat came after the check had recorded it offline, so it is online again.
    const next = await advanceStatuses(monitor.db, now);
    expect(next).toEqual([{ id: first, status: 'online' }]);
  });
});
