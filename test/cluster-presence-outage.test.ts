// Cluster presence across a database outage (issue 32). An outage stops every instance's renewals
// alike, so rows of live instances age meanwhile; the leader must not take them for dead the moment the
// database is back, only once the database has answered its own renewals for a whole dead-after period.
// An instance reaped all the same finds its row gone at its next renewal and writes its agents'
// presence again (the whole path, events included, is in cluster.test.ts). A socket that closed while
// the database was away leaves no row behind listing it connected. Runs on a PostgreSQL cluster of its
// own, stopped and started by the test (the shared one is never touched), and a nats-server of its own.
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgres, type DbHandle } from '../src/db/create-db.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { ClusterBus } from '../src/modules/cluster/cluster-bus.js';
import { InstanceRegistry } from '../src/modules/cluster/instance-registry.js';
import { ClusterPresence } from '../src/modules/cluster/presence.js';
import { createLogger } from '../src/platform/logger.js';
import { clusterToolsSkip, startNats } from './helpers/cluster-rig.js';
import { createPgCluster, postgresBinDir, type PgCluster } from './helpers/pg-cluster.js';

const binDir = postgresBinDir();
const logger = createLogger({ level: 'silent' });
const timing = { renewMs: 200, deadAfterMs: 2_000 };
const agent = 'a'.repeat(32);

const rig = clusterToolsSkip('cluster presence across a database outage');

describe.skipIf(!binDir || rig.skip)(rig.title, () => {
  let cluster: PgCluster;
  let handle: DbHandle;
  const registries: InstanceRegistry[] = [];

  beforeAll(async () => {
    cluster = await createPgCluster(binDir!);
    handle = openPostgres(cluster.url, logger);
    await migrateToLatest(handle);
    await handle.db.insertInto('agents').values({ id: agent, name: 'fw-a', hostname: 'fw-a', created_at: new Date() }).execute();
  }, 60_000);
  afterAll(async () => {
    for (const r of registries) await r.stop().catch(() => undefined);
    await handle?.close();
    await cluster?.remove();
  });

  const instanceRows = async () => (await handle.db.selectFrom('cluster_instances').select('id').orderBy('id').execute()).map((r) => r.id);
  const presenceRows = () => handle.db.selectFrom('agent_presence').select(['agent_id', 'instance_id']).execute();

  it('does not reap an instance whose row aged while the database was away, until the database has answered a whole dead-after period', async () => {
    const leader = new InstanceRegistry(handle.db, { id: 'leader', advertiseAddress: 'l' }, logger, async () => undefined, timing);
    registries.push(leader);
    await leader.start();
    leader.lead(true);
    // "quiet" stands for an instance that cannot renew yet: its row as it was before the outage.
    await sql`insert into cluster_instances (id, advertise_address, started_at, last_seen_at) values ('quiet', 'q', now(), now())`.execute(handle.db);
    await handle.db.insertInto('agent_presence').values({ agent_id: agent, instance_id: 'quiet', connected_at: new Date() }).execute();
    await sleep(1_000);

    await cluster.stop();
    await sleep(3 * timing.renewMs);
    await cluster.start();
    // Back, with the quiet instance's row older than dead-after (as after a long outage).
    await sql`update cluster_instances set last_seen_at = now() - interval '1 minute' where id = 'quiet'`.execute(handle.db);

    await sleep(timing.deadAfterMs / 2);
    expect(await instanceRows()).toEqual(['leader', 'quiet']);
    expect(await presenceRows()).toEqual([{ agent_id: agent, instance_id: 'quiet' }]);

    // It never renews: once the database has answered the leader for dead-after, it is reaped.
    await sleep(timing.deadAfterMs + 4 * timing.renewMs);
    expect(await instanceRows()).toEqual(['leader']);
    expect(await presenceRows()).toEqual([]);
    const events = await handle.db.selectFrom('agent_events').select('type').where('agent_id', '=', agent).execute();
    expect(events.map((e) => e.type)).toEqual(['disconnected']);
    await leader.stop();
  }, 60_000);

  it('an instance reaped while alive finds its row gone at its next renewal and writes its presence again', async () => {
    let rewritten = 0;
    const alive = new InstanceRegistry(handle.db, { id: 'alive', advertiseAddress: 'a' }, logger, async () => void rewritten++, timing);
    registries.push(alive);
    await alive.start();
    await sleep(3 * timing.renewMs);
    expect(rewritten).toBe(0);
    // What the leader's reaper does to an instance it took for dead.
    await sql`delete from cluster_instances where id = 'alive'`.execute(handle.db);
    await sleep(3 * timing.renewMs);
    expect(rewritten).toBe(1);
    expect(await instanceRows()).toEqual(['alive']);
    await alive.stop();
  }, 30_000);

  it('removes the row of a socket that closed while the database was away, once it is back', async () => {
    const nats = await startNats();
    const bus = new ClusterBus(nats.url, 'presence-test', logger);
    await bus.start();
    const presence = new ClusterPresence(handle.db, bus, 'me', logger);
    presence.start();
    try {
      await presence.local(agent, true, new Date());
      expect(await presenceRows()).toEqual([{ agent_id: agent, instance_id: 'me' }]);
      await cluster.stop();
      await presence.local(agent, false, new Date());
      await cluster.start();
      // Tried again on the next refresh tick (every 5 s).
      await vi.waitFor(async () => expect(await presenceRows()).toEqual([]), { timeout: 15_000, interval: 250 });
    } finally {
      presence.stop();
      await bus.stop();
      await nats.stop();
    }
  }, 30_000);
});
