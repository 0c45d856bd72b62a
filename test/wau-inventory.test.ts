// Storing the software inventory from heartbeats (spec Agent rule 2): the latest list of each Windows
// agent replaces its earlier one, an unchanged list (the normal case, every minute) writes nothing, the
// work per heartbeat is bounded, and a failure to store it never fails the heartbeat.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SoftwareInventory } from '../src/modules/wau/software-inventory.js';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { heartbeat, program, registerAgent } from './helpers/wau.js';

const clock = new FakeClock('2026-11-22T10:00:00Z');
let t: TestApp;
let admin: Record<string, string>;
let key: string;
let customer: number;

beforeAll(async () => {
  t = await buildTestApp({ clock, captureLogs: true });
  const token = await adminToken(t);
  admin = bearer(token);
  customer = (await createCustomer(t.app, token, 'INV-1')).id;
  key = (await createKey(t.app, admin, 'agent', customer)).key;
});
afterAll(() => t.close());

const LIST = [
  program('Mozilla Firefox (x64 de)', '133.0', 'Mozilla'),
  program('Google Chrome', '131.0.6778.86', 'Google LLC'),
  program('7-Zip 24.08 (x64)', '24.08', 'Igor Pavlov'),
];

/** The agent's stored rows with the transaction that wrote each (xmin changes whenever a row is rewritten). */
async function storedRows(agentId: string) {
  const { rows } = await sql<{ name: string; version: string; publisher: string; install_date: string; xmin: string }>`
    select name, version, publisher, install_date, xmin::text as xmin from agent_software where agent_id = ${agentId} order by name, version`.execute(t.db.db);
  return rows;
}

async function storedState(agentId: string) {
  const { rows } = await sql<{ hash: string; entry_count: number; received_at: Date; xmin: string }>`
    select hash, entry_count, received_at, xmin::text as xmin from agent_software_state where agent_id = ${agentId}`.execute(t.db.db);
  return rows[0];
}

const names = async (agentId: string) => (await storedRows(agentId)).map((r) => `${r.name} ${r.version}`);

describe('an agent heartbeating the same inventory', () => {
  it('writes nothing: neither the rows nor the hash are touched, also for a process that just started', async () => {
    const id = await registerAgent(t.app, key, 'ws-same');
    await heartbeat(t.app, key, id, 'windows', LIST);
    const rows = await storedRows(id);
    const state = await storedState(id);
    expect(rows.map((r) => r.name)).toEqual(['7-Zip 24.08 (x64)', 'Google Chrome', 'Mozilla Firefox (x64 de)']);
    expect(state).toMatchObject({ entry_count: 3, received_at: clock.now() });

    for (let minute = 0; minute < 3; minute++) {
      clock.advance(60_000);
      // The same programs in another order, one reported twice: the same inventory.
      await heartbeat(t.app, key, id, 'windows', [LIST[2], LIST[0], LIST[1], LIST[0]]);
    }
    expect(await storedRows(id)).toEqual(rows);
    expect(await storedState(id)).toEqual(state);

    // A restarted server has no memory of the hash: it reads it, and still writes nothing.
    const restarted = new SoftwareInventory(t.db.db, clock);
    expect(await restarted.record(restarted.examine({ agentId: id, platform: 'windows', software: LIST, receivedAt: clock.now() }))).toBe('unchanged');
    clock.advance(11 * 60_000); // past the period after which the remembered hash is checked again
    await heartbeat(t.app, key, id, 'windows', LIST);
    expect(await storedRows(id)).toEqual(rows);
    expect(await storedState(id)).toEqual(state);
  });
});

describe('an agent heartbeating a changed inventory', () => {
  it("replaces the agent's rows with the latest list; a heartbeat without the list keeps them; [] empties them", async () => {
    const id = await registerAgent(t.app, key, 'ws-change');
    await heartbeat(t.app, key, id, 'windows', LIST);
    clock.advance(60_000);
    const next = [program('Mozilla Firefox (x64 de)', '134.0', 'Mozilla'), LIST[1]!, program('VLC media player', '3.0.21', 'VideoLAN')];
    await heartbeat(t.app, key, id, 'windows', next);
    expect(await names(id)).toEqual(['Google Chrome 131.0.6778.86', 'Mozilla Firefox (x64 de) 134.0', 'VLC media player 3.0.21']);
    expect(await storedState(id)).toMatchObject({ entry_count: 3, received_at: clock.now() });

    await heartbeat(t.app, key, id, 'windows'); // the agent could not read its registry this time
    expect(await names(id)).toHaveLength(3);
    await heartbeat(t.app, key, id, 'windows', 'not a list');
    expect(await names(id)).toHaveLength(3);
    await heartbeat(t.app, key, id, 'windows', []);
    expect(await names(id)).toEqual([]);
    expect(await storedState(id)).toMatchObject({ entry_count: 0 });
  });

  it('never stores system components, nor any software of a Linux heartbeat', async () => {
    const id = await registerAgent(t.app, key, 'ws-components');
    await heartbeat(t.app, key, id, 'windows', [
      ...LIST,
      program('Only Here', '1.0', 'Acme'),
      program('Microsoft Update Health Tools', '5.72', 'Microsoft Corporation', { system_component: true }),
      program('Windows SDK AddOn', '10.1', 'Microsoft Corporation', { SystemComponent: 1 }),
      program('Click-to-Run Licensing Component', '16.0', 'Microsoft Corporation', { SystemComponent: '1' }),
    ]);
    expect(await names(id)).toEqual(['7-Zip 24.08 (x64) 24.08', 'Google Chrome 131.0.6778.86', 'Mozilla Firefox (x64 de) 133.0', 'Only Here 1.0']);

    const linux = await registerAgent(t.app, key, 'pve-inv', 'linux');
    await heartbeat(t.app, key, linux, 'linux', LIST);
    expect(await storedRows(linux)).toEqual([]);
    expect(await storedState(linux)).toBeUndefined();
    // An agent that reports another platform now drops out of the customer's inventory at once.
    await heartbeat(t.app, key, id, 'linux', []);
    const inventory = (await t.app.inject({ method: 'GET', url: `/api/v1/customers/${customer}/wau/inventory`, headers: admin })).json() as Array<{ name: string }>;
    expect(inventory.map((p) => p.name)).not.toContain('Only Here');
    expect(inventory.map((p) => p.name)).toContain('Google Chrome'); // the other agents' lists
    expect(await names(id)).toHaveLength(4); // kept, in case it reports Windows again
  });

  it('looks at the first 5,000 entries and clips long text', async () => {
    const id = await registerAgent(t.app, key, 'ws-huge');
    const many = Array.from({ length: 5100 }, (_, i) => program(`Program ${String(i).padStart(4, '0')}`, '1.0', 'Acme'));
    many[0] = program(`Program 0000 ${'x'.repeat(1000)}`, 'v'.repeat(1000), 'p'.repeat(1000), { install_date: 'd'.repeat(1000) });
    await heartbeat(t.app, key, id, 'windows', many);
    const rows = await storedRows(id);
    expect(rows).toHaveLength(5000);
    expect(rows.at(-1)!.name).toBe('Program 4999');
    expect([rows[0]!.name, rows[0]!.version.length, rows[0]!.publisher.length, rows[0]!.install_date.length]).toEqual([
      `Program 0000 ${'x'.repeat(256 - 13)}`,
      128,
      256,
      32,
    ]);
  });
});

describe('an inventory that cannot be stored', () => {
  it('does not fail the heartbeat; it is logged, and stored with the next heartbeat', async () => {
    const id = await registerAgent(t.app, key, 'ws-failing');
    await heartbeat(t.app, key, id, 'windows', LIST);
    // Every new row now breaks a constraint: the inventory write fails inside the real database.
    await sql`alter table agent_software add constraint refuse_rows check (false) not valid`.execute(t.db.db);
    try {
      clock.advance(60_000);
      const res = await heartbeat(t.app, key, id, 'windows', [program('New Program', '1.0', 'Acme')]);
      expect(res.json()).toMatchObject({ ok: true, status: 'online' });
      expect(t.logs().some((l) => l.includes('could not store the software inventory') && l.includes(id))).toBe(true);
      expect((await names(id)).length).toBe(3); // the transaction took nothing with it
      const last = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}`, headers: admin });
      expect((last.json() as { last_heartbeat: string }).last_heartbeat).toBe(clock.now().toISOString());
    } finally {
      await sql`alter table agent_software drop constraint refuse_rows`.execute(t.db.db);
    }
    await heartbeat(t.app, key, id, 'windows', [program('New Program', '1.0', 'Acme')]);
    expect(await names(id)).toEqual(['New Program 1.0']);
  });
});

describe('an agent deleted and registered again under its id', () => {
  it('loses its inventory with it, and its next heartbeat stores the list again', async () => {
    const id = await registerAgent(t.app, key, 'ws-reborn');
    await heartbeat(t.app, key, id, 'windows', LIST);
    const deleted = await t.app.inject({ method: 'DELETE', url: `/api/v1/agents/${id}`, headers: admin });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(await storedRows(id)).toEqual([]);
    expect(await storedState(id)).toBeUndefined();
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/v1/agent/register',
      headers: apiKey(key),
      payload: { agent_id: id, hostname: 'ws-reborn', platform: 'windows' },
    });
    expect(again.statusCode, again.body).toBe(200);
    await heartbeat(t.app, key, id, 'windows', LIST);
    expect(await storedRows(id)).toHaveLength(3);
  });
});
