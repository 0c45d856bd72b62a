// The once-per-cluster work's leader (issue 32): a lease row in PostgreSQL. Two instances on one
// database: exactly one leads; a leader that stops gives the lease up at once; a leader that dies
// (stops renewing) is replaced once its lease lapses; a leader that cannot reach the database steps
// down by itself before its lease could be taken, so two never lead at once.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgres, type DbHandle } from '../src/db/create-db.js';
import { LeaderLease } from '../src/modules/cluster/leader-lease.js';
import { createLogger } from '../src/platform/logger.js';
import { createPostgresUrl, testDbKind } from './helpers/db.js';

const logger = createLogger({ level: 'silent' });
const FAST = { leaseMs: 1_500, renewMs: 300 };

describe.skipIf(testDbKind() !== 'postgres')('leader lease', () => {
  let db: { url: string; drop(): Promise<void> };
  const handles: DbHandle[] = [];
  const open = () => {
    const handle = openPostgres(db.url, logger);
    handles.push(handle);
    return handle;
  };
  beforeAll(async () => {
    db = (await createPostgresUrl('migrated'))!;
  });
  afterAll(async () => {
    await Promise.all(handles.map((h) => h.close().catch(() => undefined)));
    await db?.drop();
  });

  function instance(name: string, lease: string, handle = open()) {
    const changes: boolean[] = [];
    const leader = new LeaderLease(handle.db, name, logger, (leading) => changes.push(leading), { name: lease, ...FAST });
    return { lease: leader, changes, handle };
  }
  it('lets exactly one of two instances lead, and hands over at once when the leader stops', async () => {
    const a = instance('a', 'handover');
    const b = instance('b', 'handover');
    a.lease.start();
    b.lease.start();
    await vi.waitFor(() => expect([a.lease.leading, b.lease.leading].filter(Boolean)).toHaveLength(1));
    // Several renewal rounds later it is still exactly one, and the same one.
    const leader = a.lease.leading ? a : b;
    const other = leader === a ? b : a;
    const token = leader.lease.token;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(leader.lease.leading).toBe(true);
    expect(other.lease.leading).toBe(false);
    expect(leader.lease.token).toBe(token);
    await leader.lease.stop();
    expect(leader.changes).toEqual([true, false]);
    await vi.waitFor(() => expect(other.lease.leading).toBe(true), { timeout: 1_000 });
    // A new holder gets a new fencing token.
    expect(other.lease.token).toBeGreaterThan(token!);
    await other.lease.stop();
  });

  it('replaces a leader that dies only after its lease lapsed, and a leader cut off from the database steps down first', async () => {
    const a = instance('a', 'cut-off');
    a.lease.start();
    await vi.waitFor(() => expect(a.lease.leading).toBe(true));
    // The leader's database connection goes away (its pool closed): renewals fail.
    await a.handle.close();
    const b = instance('b', 'cut-off');
    b.lease.start();
    const leadingTogether: boolean[] = [];
    await vi.waitFor(
      () => {
        leadingTogether.push(a.lease.leading && b.lease.leading);
        expect(b.lease.leading).toBe(true);
      },
      { timeout: 5_000, interval: 50 },
    );
    expect(a.lease.leading).toBe(false);
    expect(a.changes).toEqual([true, false]);
    expect(leadingTogether.some(Boolean)).toBe(false);
    await b.lease.stop();
    await a.lease.stop();
  });
});
