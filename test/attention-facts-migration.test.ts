// Migration 0009 fills agent_attention_facts from the system data agents stored before it existed, so
// an upgraded server's attention list is complete before the next heartbeats arrive. Run on an
// in-memory embedded database migrated step by step (the SQL is the same on PostgreSQL).
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../migrations/index.js';
import { wrapPglite, type DbHandle } from '../src/db/create-db.js';
import { migrateToLatest, RMM_MIGRATIONS } from '../src/db/migrator.js';
import { pgliteArtifacts } from '../src/db/pglite-artifacts.js';
import { fixtureText } from './helpers/fixtures.js';

// initdb and the migrations up to the one tested: seconds of CPU that two busy cores stretch past the
// default hook timeout.
const NEW_DATABASE_TIMEOUT_MS = 180_000;
describe('migration 0009_attention_facts', () => {
  let handle: DbHandle;

  beforeAll(async () => {
    handle = wrapPglite(await PGlite.create(await pgliteArtifacts()), 'migration 0009 test');
    const before = migrations.findIndex(([name]) => name === '0009_attention_facts');
    await migrateToLatest(handle, { ...RMM_MIGRATIONS, list: migrations.slice(0, before) });
    const upTo0009 = { ...RMM_MIGRATIONS, list: migrations.slice(0, before + 1) };
    const agent = (id: string, system: string | null) => ({ id, name: id, hostname: id, platform: 'freebsd' as const, system, created_at: new Date() });
    await handle.db
      .insertInto('agents')
      .values([
        agent('fixture', fixtureText('heartbeat-freebsd.json')),
        agent('odd', JSON.stringify({ updates: { available: 'yes', packages: 'many' }, certificates: ['x', { name: 'c', valid_to: 5 }] })),
        agent('array', '[1,2]'),
        agent('never', null),
      ])
      .execute();
    expect((await migrateToLatest(handle, upTo0009)).applied).toEqual(['0009_attention_facts']);
  }, NEW_DATABASE_TIMEOUT_MS);
  afterAll(() => handle?.close());

  it('fills the facts of every agent with an object of system data, type-guarded', async () => {
    const rows = await handle.db.selectFrom('agent_attention_facts').selectAll().orderBy('agent_id').execute();
    expect(rows.map((r) => r.agent_id)).toEqual(['fixture', 'odd']);
    const fixture = rows[0]!;
    expect(fixture).toMatchObject({ updates_available: true, update_packages: 2 });
    expect(fixture.certificates).toHaveLength(8);
    expect(fixture.certificates[0]).toEqual({ name: 'cert-0', valid_to: '2027-01-15T00:00:00Z', in_use: true });
    expect(rows[1]).toEqual({ agent_id: 'odd', updates_available: null, update_packages: null, certificates: [{ name: 'c', valid_to: 5, in_use: null }] });
  });
});

// Migration 0020 adds each disk's fill level to the facts, from the stored system data, in the shape
// the heartbeat writer uses (whole percent; from bytes when the percent is missing).
describe('migration 0020_console_defects', () => {
  let handle: DbHandle;

  beforeAll(async () => {
    handle = wrapPglite(await PGlite.create(await pgliteArtifacts()), 'migration 0020 test');
    const at = migrations.findIndex(([name]) => name === '0020_console_defects');
    await migrateToLatest(handle, { ...RMM_MIGRATIONS, list: migrations.slice(0, at) });
    const agent = (id: string, system: string | null) => ({ id, name: id, hostname: id, platform: 'linux' as const, system, created_at: new Date() });
    await handle.db
      .insertInto('agents')
      .values([
        agent('fixture', fixtureText('heartbeat-linux.json')),
        agent('odd', JSON.stringify({ disks: ['x', { mount: { a: 1 }, used_percent: '99' }, { mount: '/b', used_bytes: 91, total_bytes: 100 }, { mount: '/z', used_bytes: 1, total_bytes: 0 }] })),
        agent('none', JSON.stringify({ disks: 'many' })),
      ])
      .execute();
    await handle.db.insertInto('agent_attention_facts').values(['fixture', 'odd', 'none'].map((agent_id) => ({ agent_id, updates_available: null, update_packages: null, certificates: '[]' }))).execute();
    expect((await migrateToLatest(handle, { ...RMM_MIGRATIONS, list: migrations.slice(0, at + 1) })).applied).toEqual(['0020_console_defects']);
  }, NEW_DATABASE_TIMEOUT_MS);
  afterAll(() => handle?.close());

  it('fills each disk as {mount, used_percent}, type-guarded', async () => {
    const rows = await handle.db.selectFrom('agent_attention_facts').select(['agent_id', 'disks']).orderBy('agent_id').execute();
    expect(rows).toEqual([
      { agent_id: 'fixture', disks: [{ mount: '/', used_percent: 4 }] },
      { agent_id: 'none', disks: [] },
      { agent_id: 'odd', disks: [{ mount: null, used_percent: null }, { mount: '/b', used_percent: 91 }, { mount: '/z', used_percent: null }] },
    ]);
  });
});
