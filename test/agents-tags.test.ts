// Tags and a note per agent (issue 33): PATCH /agents/{id} sets them (audited, write access, the
// caller's customer scope as for every agent change), every agent object carries them, GET /agents?tag=
// filters exactly ignoring case, GET /agents/tags counts them within the scope, and hostile input is a
// 400 with the contract's body that changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

interface Agent { id: string; name: string; customer_id: number | null; tags: string[]; note: string }

let t: TestApp;
let admin: Record<string, string>;
let customerA: number;
let customerB: number;
let agentA: string;
let agentB: string;
let loose: string;

beforeAll(async () => {
  t = await buildTestApp();
  const token = await adminToken(t);
  admin = bearer(token);
  customerA = (await createCustomer(t.app, token, '3301', 'Alpha')).id;
  customerB = (await createCustomer(t.app, token, '3302', 'Beta')).id;
  agentA = (await ok<Agent>('POST', '/agents', { name: 'fw-alpha', customer_id: customerA }, admin, 201)).id;
  agentB = (await ok<Agent>('POST', '/agents', { name: 'fw-beta', customer_id: customerB }, admin, 201)).id;
  loose = (await ok<Agent>('POST', '/agents', { name: 'fw-loose' }, admin, 201)).id;
});
afterAll(() => t.close());

const call = (method: 'GET' | 'PATCH', url: string, payload?: unknown, headers = admin) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });

async function ok<T>(method: 'GET' | 'PATCH' | 'POST', url: string, payload?: unknown, headers = admin, status = 200): Promise<T> {
  const res = await t.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
  return res.json() as T;
}

const stored = (id: string) => t.db.db.selectFrom('agents').select(['tags', 'tag_keys', 'note']).where('id', '=', id).executeTakeFirstOrThrow();

describe('PATCH /agents/{id}', () => {
  it('sets tags (trimmed, as written) and the note, and every read of the agent carries them', async () => {
    const answer = await ok<Agent>('PATCH', `/agents/${agentA}`, { tags: [' VIP ', 'Standort München', 'backup-nas'], note: 'Schlüssel beim Empfang.\nTel. 0123' });
    expect(answer).toMatchObject({ id: agentA, tags: ['VIP', 'Standort München', 'backup-nas'], note: 'Schlüssel beim Empfang.\nTel. 0123' });
    expect(await ok('GET', `/agents/${agentA}`)).toMatchObject({ tags: answer.tags, note: answer.note });
    expect((await ok<Agent[]>('GET', '/agents')).find((a) => a.id === agentA)).toMatchObject({ tags: answer.tags, note: answer.note });
    expect((await ok<Agent[]>('GET', `/customers/${customerA}/agents`))[0]).toMatchObject({ tags: answer.tags });
    expect(await stored(agentA)).toMatchObject({ tag_keys: ['vip', 'standort münchen', 'backup-nas'] });
  });

  it('leaves an absent field as it is; an empty list or "" clears', async () => {
    expect(await ok<Agent>('PATCH', `/agents/${loose}`, { note: 'only a note' })).toMatchObject({ tags: [], note: 'only a note' });
    expect(await ok<Agent>('PATCH', `/agents/${loose}`, { tags: ['x'] })).toMatchObject({ tags: ['x'], note: 'only a note' });
    expect(await ok<Agent>('PATCH', `/agents/${loose}`, { tags: [], note: '' })).toMatchObject({ tags: [], note: '' });
  });

  it('refuses hostile or malformed input with 400 and the contract body, changing nothing', async () => {
    const before = await stored(agentA);
    const bad: Array<[unknown, string]> = [
      [{}, ''],
      [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags'],
      [{ tags: ['x'.repeat(41)] }, 'tags.0'],
      [{ tags: ['ok', '   '] }, 'tags.1'],
      [{ tags: ['VIP', 'vip'] }, 'tags.1'],
      [{ tags: ['a,b'] }, 'tags.0'],
      [{ tags: ['line\nbreak'] }, 'tags.0'],
      [{ tags: ['nul\u0000'] }, 'tags.0'],
      [{ tags: 'VIP' }, 'tags'],
      [{ tags: [5] }, 'tags.0'],
      [{ note: 'n'.repeat(2001) }, 'note'],
      [{ note: 42 }, 'note'],
      [{ note: 'x', customer_id: customerB }, ''],
    ];
    for (const [payload, path] of bad) {
      const body = expectError(await call('PATCH', `/agents/${agentA}`, payload), 400, 'VALIDATION_ERROR');
      if (path) expect(body.details, JSON.stringify(payload)).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    }
    expectError(await call('PATCH', '/agents/not-hex', { note: 'x' }), 400, 'VALIDATION_ERROR');
    expectError(await call('PATCH', `/agents/${'f'.repeat(32)}`, { note: 'x' }), 404, 'NOT_FOUND');
    expect(await stored(agentA)).toEqual(before);
    // At the limits: accepted.
    const max = Array.from({ length: 20 }, (_, i) => `${'t'.repeat(38)}${String(i).padStart(2, '0')}`);
    expect(await ok<Agent>('PATCH', `/agents/${loose}`, { tags: max, note: 'n'.repeat(2000) })).toMatchObject({ tags: max });
    await ok('PATCH', `/agents/${loose}`, { tags: [], note: '' });
  });

  it('is audited as agent.annotate', async () => {
    await ok('PATCH', `/agents/${agentB}`, { tags: ['audited'] });
    await expect
      .poll(async () => (await ok<Array<{ action: string; path: string; status_code: number }>>('GET', '/audit?action=agent.annotate')).map((e) => e.path))
      .toContain(`/api/v1/agents/${agentB}`);
  });

  it('needs write access; a customer-scoped key changes its own agents only (others: 404, unchanged)', async () => {
    expectError(await t.app.inject({ method: 'PATCH', url: `/api/v1/agents/${agentA}`, payload: { note: 'x' } }), 401, 'UNAUTHORIZED');
    const read = apiKey((await createKey(t.app, admin, 'read')).key);
    expectError(await call('PATCH', `/agents/${agentA}`, { note: 'x' }, read), 403, 'FORBIDDEN');
    const agentKey = apiKey((await createKey(t.app, admin, 'agent')).key);
    expectError(await call('PATCH', `/agents/${agentA}`, { note: 'x' }, agentKey), 403, 'FORBIDDEN');
    const writeB = apiKey((await createKey(t.app, admin, 'write', customerB)).key);
    const before = await stored(agentA);
    for (const id of [agentA, loose]) expectError(await call('PATCH', `/agents/${id}`, { note: 'taken over' }, writeB), 404, 'NOT_FOUND');
    expect(await stored(agentA)).toEqual(before);
    expect(await ok<Agent>('PATCH', `/agents/${agentB}`, { note: 'by B' }, writeB)).toMatchObject({ note: 'by B' });
  });
});

describe('filtering by tag', () => {
  it('GET /agents?tag= matches a whole tag ignoring case, with other filters and within the scope', async () => {
    await ok('PATCH', `/agents/${agentB}`, { tags: ['vip', 'linux-host'] });
    const names = async (query: string, headers = admin) => (await ok<Agent[]>('GET', `/agents?${query}`, undefined, headers)).map((a) => a.name);
    expect(await names('tag=VIP')).toEqual(['fw-alpha', 'fw-beta']);
    expect(await names('tag=%20vip%20')).toEqual(['fw-alpha', 'fw-beta']);
    expect(await names('tag=standort%20m%C3%BCnchen')).toEqual(['fw-alpha']);
    expect(await names('tag=vi')).toEqual([]);
    expect(await names(`tag=vip&customer_id=${customerB}`)).toEqual(['fw-beta']);
    expect(await names('tag=vip&limit=1')).toEqual(['fw-alpha']);
    const readA = apiKey((await createKey(t.app, admin, 'read', customerA)).key);
    expect(await names('tag=vip', readA)).toEqual(['fw-alpha']);
    expectError(await call('GET', `/agents?tag=${'x'.repeat(41)}`), 400, 'VALIDATION_ERROR');
  });

  it('GET /agents/tags counts each tag once ignoring case, in natural order, within the scope', async () => {
    await ok('PATCH', `/agents/${loose}`, { tags: ['VIP', 'rack-10', 'rack-9'] });
    const all = await ok<Array<{ tag: string; agent_count: number }>>('GET', '/agents/tags');
    expect(all.map((x) => x.tag)).toEqual(['backup-nas', 'linux-host', 'rack-9', 'rack-10', 'Standort München', 'VIP']);
    expect(all.find((x) => x.tag === 'VIP')?.agent_count).toBe(3);
    const readA = apiKey((await createKey(t.app, admin, 'read', customerA)).key);
    expect(await ok('GET', '/agents/tags', undefined, readA)).toEqual([
      { tag: 'backup-nas', agent_count: 1 },
      { tag: 'Standort München', agent_count: 1 },
      { tag: 'VIP', agent_count: 1 },
    ]);
  });
});
