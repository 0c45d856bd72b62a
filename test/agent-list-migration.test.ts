// Migration 0017 on a server that already has agents: each gets its natural name key (demo-2 before
// demo-10) and the list's facts from its stored heartbeat, so an upgraded server's list is complete and
// ordered before the next heartbeats arrive. Run on an in-memory embedded database migrated step by
// step; the API tests check the same order on PostgreSQL.
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../migrations/index.js';
import { wrapPglite, type DbHandle } from '../src/db/create-db.js';
import { migrateToLatest, RMM_MIGRATIONS } from '../src/db/migrator.js';
import { pgliteArtifacts } from '../src/db/pglite-artifacts.js';
import { fixtureText } from './helpers/fixtures.js';

// initdb and the migrations up to the one tested: seconds of CPU that two busy cores stretch past the
// default hook timeout.
const NEW_DATABASE_TIMEOUT_MS = 180_000;
describe('migration 0017_agent_tags_notes', () => {
  let handle: DbHandle;

  beforeAll(async () => {
    handle = wrapPglite(await PGlite.create(await pgliteArtifacts()), 'migration 0017 test');
    const at = migrations.findIndex(([name]) => name === '0017_agent_tags_notes');
    await migrateToLatest(handle, { ...RMM_MIGRATIONS, list: migrations.slice(0, at) });
    const agent = (id: string, name: string, system: string | null) => ({ id, name, hostname: id, platform: 'freebsd' as const, system, created_at: new Date() });
    // Inserted through raw SQL: the typed schema already knows 0017's columns.
    for (const a of [
      agent('a1', 'demo-10', fixtureText('heartbeat-freebsd.json')),
      agent('a2', 'demo-2', fixtureText('heartbeat-windows.json')),
      agent('a3', 'Demo-100', '{"os":{"name":"with \\u0000 NUL"},"disks":[{"mount":"/","used_percent":91.25}]}'),
      agent('a4', 'demo-1', '[1,2]'),
      agent('a5', 'demo-9', null),
    ]) {
      await sql`insert into agents (id, name, hostname, platform, system, created_at) values (${a.id}, ${a.name}, ${a.hostname}, ${a.platform}, ${a.system}, ${a.created_at})`.execute(handle.db);
    }
    expect((await migrateToLatest(handle, { ...RMM_MIGRATIONS, list: migrations.slice(0, at + 1) })).applied).toEqual(['0017_agent_tags_notes']);
  }, NEW_DATABASE_TIMEOUT_MS);
  afterAll(() => handle?.close());

  it('orders existing agents by name naturally through the new index order', async () => {
    const rows = await handle.db.selectFrom('agents').select('name').orderBy('name_key').orderBy('id').execute();
    expect(rows.map((r) => r.name)).toEqual(['demo-1', 'demo-2', 'demo-9', 'demo-10', 'Demo-100']);
    const indexes = await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'agents' order by indexname`.execute(handle.db);
    expect(indexes.rows.map((r) => r.indexname)).toContain('agents_name_key_order_idx');
    expect(indexes.rows.map((r) => r.indexname)).not.toContain('agents_name_order_idx');
  });

  it('fills the facts from stored heartbeats, type-guarded, and leaves the rest unknown', async () => {
    const rows = await handle.db
      .selectFrom('agents')
      .select(['id', 'os_name', 'primary_ip', 'pending_updates', 'reboot_required', 'disk_used_percent', 'disk_worst_mount', 'uptime_seconds', 'tags', 'note'])
      .orderBy('id')
      .execute();
    expect(rows[0]).toEqual({
      id: 'a1',
      os_name: 'OPNsense',
      primary_ip: '10.92.65.27',
      pending_updates: 2,
      reboot_required: false,
      disk_used_percent: 5,
      disk_worst_mount: '/',
      uptime_seconds: 1234567,
      tags: [],
      note: '',
    });
    expect(rows[1]).toMatchObject({ id: 'a2', os_name: 'Microsoft Windows 11 Pro', primary_ip: '10.1.0.57', pending_updates: 1 });
    expect(rows[2]).toMatchObject({ id: 'a3', os_name: 'with  NUL', disk_used_percent: 91.3, primary_ip: null, pending_updates: null });
    for (const row of rows.slice(3)) expect(row).toMatchObject({ os_name: null, primary_ip: null, uptime_seconds: null, disk_used_percent: null });
  });

  it('natural_sort_key: digit runs by number, case and accents folded, leading zeros ignored', async () => {
    const names = ['b10', 'B9', 'a', 'Ä2', 'a10', 'a2', 'a02x', 'a2y', 'straße', 'strasse1', '1.10.0', '1.9.9', 'x-0', 'x-00001'];
    const { rows } = await sql<{ t: string }>`select t from unnest(${names}::text[]) as t order by natural_sort_key(t) collate "C", t collate "C"`.execute(handle.db);
    expect(rows.map((r) => r.t)).toEqual(['1.9.9', '1.10.0', 'a', 'a2', 'Ä2', 'a02x', 'a2y', 'a10', 'B9', 'b10', 'straße', 'strasse1', 'x-0', 'x-00001']);
  });
});
