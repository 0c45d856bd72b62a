// Reaping a dead instance (issue 32): its agents' presence goes and each gets exactly one
// `disconnected` event, dated when the instance was last seen; an agent whose event the instance wrote
// itself before dying (its row not yet deleted) does not get a second one; live instances are untouched.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DbHandle } from '../src/db/create-db.js';
import { reapInstances } from '../src/modules/cluster/presence.repo.js';
import { createTestDb } from './helpers/db.js';

let handle: DbHandle;
beforeAll(async () => {
  handle = await createTestDb();
});
afterAll(() => handle?.close());

it('writes one disconnected event per agent of a dead instance, never a second, and leaves live instances alone', async () => {
  const db = handle.db;
  const id = (c: string) => c.repeat(32);
  const connectedAt = new Date(Date.now() - 120_000);
  await db.insertInto('agents').values(['a', 'b', 'c'].map((c) => ({ id: id(c), name: `fw-${c}`, hostname: c, created_at: connectedAt }))).execute();
  await sql`insert into cluster_instances (id, advertise_address, started_at, last_seen_at) values
    ('dead', 'h1', now() - interval '1 hour', now() - interval '60 seconds'),
    ('live', 'h2', now() - interval '1 hour', now())`.execute(db);
  await db
    .insertInto('agent_presence')
    .values([
      { agent_id: id('a'), instance_id: 'dead', connected_at: connectedAt },
      { agent_id: id('b'), instance_id: 'dead', connected_at: connectedAt },
      { agent_id: id('c'), instance_id: 'live', connected_at: connectedAt },
    ])
    .execute();
  // The dead instance wrote b's event, then died before deleting b's row.
  await db.insertInto('agent_events').values({ agent_id: id('b'), type: 'disconnected', created_at: new Date(connectedAt.getTime() + 1_000) }).execute();

  expect(await reapInstances(db, { deadAfterMs: 15_000 })).toBe(1);
  expect(await reapInstances(db, { deadAfterMs: 15_000 })).toBe(0);

  const events = await db.selectFrom('agent_events').select(['agent_id', 'type']).where('type', '=', 'disconnected').orderBy('agent_id').execute();
  expect(events).toEqual([
    { agent_id: id('a'), type: 'disconnected' },
    { agent_id: id('b'), type: 'disconnected' },
  ]);
  expect(await db.selectFrom('agent_presence').select(['agent_id', 'instance_id']).execute()).toEqual([{ agent_id: id('c'), instance_id: 'live' }]);
  expect((await db.selectFrom('cluster_instances').select('id').execute()).map((r) => r.id)).toEqual(['live']);
});
