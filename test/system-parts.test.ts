// A heartbeat body is stored cut (issue 62, point 2): its large top-level members once per agent in
// agent_system_parts, the rest in the agent row (system-cuts.ts). Whatever changes between beats, small
// parts or large ones, a body that grows or loses members, one with no large member at all, the body
// reads back byte for byte from GET /agents/{id}/system and inside GET /agents/{id}, and the parts a
// body no longer has are gone. On PGlite by default, on PostgreSQL with TEST_DATABASE_URL.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { HeartbeatWriter } from '../src/modules/agents/heartbeat-writer.js';
import { findSystemText } from '../src/modules/agents/agents.repo.js';
import { fixtureText } from './helpers/fixtures.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';

let t: TestApp;
let token: string;
let agentKey: string;

beforeAll(async () => {
  t = await buildTestApp();
  token = await adminToken(t);
  agentKey = (await createKey(t.app, bearer(token), 'agent')).key;
});
afterAll(() => t.close());

async function register(hostname: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(agentKey), payload: { hostname, platform: 'freebsd' } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { agent_id: string }).agent_id;
}

async function send(text: string): Promise<void> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: { ...apiKey(agentKey), 'content-type': 'application/json' }, payload: text });
  expect(res.statusCode, res.body).toBe(200);
}

/** Both reads give back exactly `text`. */
async function expectStored(id: string, text: string): Promise<void> {
  const system = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}/system`, headers: bearer(token) });
  expect(system.statusCode).toBe(200);
  expect(system.body).toBe(text);
  const agent = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}`, headers: bearer(token) });
  expect(agent.statusCode).toBe(200);
  expect(agent.body.endsWith(`,"system":${text}}`)).toBe(true);
}

async function partsOf(id: string): Promise<string[]> {
  const { rows } = await sql<{ raw: string }>`select raw from agent_system_parts where agent_id = ${id} order by raw`.execute(t.db.db);
  return rows.map((r) => r.raw);
}

const list = (tag: string, n: number) => `[${Array.from({ length: n }, (_, i) => `{"name": "${tag}-${i}", "note": "Müller \\"q\\" 😀"}`).join(',\n   ')}]`;

/** A firewall-like body: small moving members between large steady ones, written with odd spacing and spellings. */
function body(id: string, beat: number, leases = 'leases', routes = 40): string {
  return `{\n "agent_id": "${id}", "platform": "freebsd", "uptime_seconds": ${1000 + beat * 60},\n "dhcp" :  ${list(leases, 30)},` +
    `\n\t"cpu": {"usage_percent": ${beat}.0, "load": [1E+0, -0, 0.50]}, "routes": ${list('route', routes)},\n` +
    ` "services": ${list('svc', 12)}, "collected_at": "2026-11-30T10:0${beat % 10}:00Z", "x_unknown": {"deep": {"deeper": [1e3]}}\n}\n`;
}

describe('a heartbeat body stored in parts', () => {
  it('reads back byte for byte when only small members change, and writes no part again', async () => {
    const id = await register('fw-parts-1');
    for (let beat = 0; beat < 3; beat++) {
      const text = body(id, beat);
      await send(text);
      await expectStored(id, text);
    }
    const parts = await partsOf(id);
    expect(parts).toHaveLength(3);
    const row = await t.db.db.selectFrom('agents').select(['system', 'system_refs']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.system).toBeNull();
    expect(row.system_refs).toHaveLength(3);
  });

  it('reads back byte for byte when large members change, and drops the parts no body has any more', async () => {
    const id = await register('fw-parts-2');
    await send(body(id, 0));
    const before = await partsOf(id);
    const changed = body(id, 1, 'renewed', 41);
    await send(changed);
    await expectStored(id, changed);
    const after = await partsOf(id);
    expect(after).toHaveLength(3);
    expect(after.filter((p) => before.includes(p))).toHaveLength(1); // the services list stayed
    expect(after.some((p) => p.includes('renewed-0'))).toBe(true);
  });

  it('stores a body without large members whole, and goes back to parts with the next large one', async () => {
    const id = await register('fw-parts-3');
    await send(body(id, 0));
    const small = `{"agent_id":"${id}", "platform":"freebsd", "uptime_seconds": 5}`;
    await send(small);
    await expectStored(id, small);
    expect(await partsOf(id)).toEqual([]);
    const row = await t.db.db.selectFrom('agents').select(['system', 'system_pieces', 'system_refs']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toEqual({ system: small, system_pieces: null, system_refs: null });
    const large = body(id, 2);
    await send(large);
    await expectStored(id, large);
  });

  it('gives back the fixtures of every platform exactly, sent twice with a member changed', async () => {
    for (const platform of ['freebsd', 'linux', 'windows']) {
      const id = await register(`parts-${platform}`);
      const fixture = fixtureText(`heartbeat-${platform}.json`).replace(/"agent_id": "[0-9a-f]+"/, `"agent_id": "${id}"`);
      await send(fixture);
      await expectStored(id, fixture);
      const next = fixture.replace(/"uptime_seconds": \d+/, '"uptime_seconds": 1');
      await send(next);
      await expectStored(id, next);
    }
  });

  it('deletes the parts with the agent', async () => {
    const id = await register('fw-parts-4');
    await send(body(id, 0));
    expect(await partsOf(id)).toHaveLength(3);
    await t.db.db.deleteFrom('agents').where('id', '=', id).execute();
    expect(await partsOf(id)).toEqual([]);
  });

  // Two instances of a cluster can write one agent's beats at once (an agent retrying through another
  // instance). Each statement changes parts only after it holds the agent's row, so whichever commits
  // last leaves a row whose parts all exist; a part the other inserted may stay until the next beat.
  it('reads back whole after two writers store different bodies of one agent at the same time', async () => {
    const id = await register('fw-parts-race');
    const writers = [new HeartbeatWriter(t.db.db, [], { run: t.db.run }), new HeartbeatWriter(t.db.db, [], { run: t.db.run })];
    const input = (text: string) => ({
      agentId: id, platform: 'freebsd' as const, hostname: null, agentVersion: null, agentSha256: null, raw: Buffer.from(text),
      parsed: JSON.parse(text) as Record<string, unknown>, keyHint: null, scope: null, receivedAt: new Date(),
    });
    for (let round = 0; round < 20; round++) {
      const bodies = [body(id, round, `a${round}`, 40 + round), body(id, round, `b${round}`, 60 - round)];
      const outcomes = await Promise.all(writers.map((w, i) => w.write(input(bodies[i]!))));
      expect(outcomes.every((o) => o.found)).toBe(true);
      const stored = await findSystemText(t.db.db, id);
      expect(bodies, `round ${round}`).toContain(stored?.system);
    }
    await send(body(id, 99));
    expect(await partsOf(id)).toHaveLength(3);
  });
});

