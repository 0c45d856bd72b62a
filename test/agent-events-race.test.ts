// Connection events are written in batches that mix many agents. An agent deleted while its event waits
// in a batch must lose that event alone, not fail the batch with everybody else's events in it.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../src/db/create-db.js';
import { insertEvents } from '../src/modules/agents/events.repo.js';
import { racingConnections, testDbKind } from './helpers/db.js';

// Two connections racing need a server; the embedded database has one connection, so nothing can race.
describe.skipIf(testDbKind() !== 'postgres')('events of an agent deleted during their batch', () => {
  let connections: Awaited<ReturnType<typeof racingConnections>>;
  let handle: DbHandle;
  let other: DbHandle;
  beforeAll(async () => {
    connections = await racingConnections();
    ({ first: handle, second: other } = connections);
  });
  afterAll(() => connections?.close());

  it('are left out while the rest of the batch is stored, when the delete commits during the insert', async () => {
    const now = new Date();
    await handle.db
      .insertInto('agents')
      .values([
        { id: 'd'.repeat(32), name: 'fw-doomed', hostname: 'fw-doomed', created_at: now },
        { id: 'k'.repeat(32), name: 'fw-kept', hostname: 'fw-kept', created_at: now },
      ])
      .execute();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let deleted!: () => void;
    const deleteRan = new Promise<void>((resolve) => (deleted = resolve));
    // The delete is made but not committed while the batch's insert starts; it commits once the insert
    // is waiting on the agent's row.
    const deletion = other.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('agents').where('id', '=', 'd'.repeat(32)).execute();
      deleted();
      await released;
    });
    await deleteRan;
    const insert = insertEvents(handle.db, [
      { agent_id: 'k'.repeat(32), type: 'disconnected', created_at: now },
      { agent_id: 'd'.repeat(32), type: 'connected', created_at: now },
    ]);
    await expect
      .poll(async () => {
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`.execute(other.db);
        return rows[0]!.n;
      })
      .toBe(1);
    release();
    await deletion;
    await insert;
    const events = await handle.db.selectFrom('agent_events').select(['agent_id', 'type']).execute();
    expect(events).toEqual([{ agent_id: 'k'.repeat(32), type: 'disconnected' }]);
  });
});
