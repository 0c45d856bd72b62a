// Heartbeats (contract §2): the body is stored and served back byte for byte for every platform, the
// agent row follows the heartbeat, errors have the contract's codes and limits (4 MiB here, not 1 MiB),
// and the group-commit writer answers only after committing, failing whole batches together.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSystemText } from '../src/modules/agents/agents.repo.js';
import { HeartbeatWriter, type HeartbeatInput } from '../src/modules/agents/heartbeat-writer.js';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { fixtureText } from './helpers/fixtures.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

const PLATFORMS = ['freebsd', 'linux', 'windows'] as const;
type Platform = (typeof PLATFORMS)[number];
const MiB = 1024 * 1024;

const fixture = (p: Platform) => fixtureText(`heartbeat-${p}.json`);

// Everything a parse-and-reserialise round trip would change: number spellings, big integers, key
// order, non-ASCII text, an escape sequence, deep unknown nesting, the fixture's own whitespace.
const DEEP = `${Array.from({ length: 30 }, (_, i) => `{"level_${i}": `).join('')}"bottom"${'}'.repeat(30)}`;
const ODDITIES =
  `{"b": 2, "a": 1, "thousand": 1e3, "hundred": 1E+2, "big": 12345678901234567890, "negzero": -0, ` +
  `"one": 1.0, "name": "Müller – 東京 😀", "escaped": "\\u00e9", "deep": ${DEEP}}`;

/** The platform's fixture as exact text, with this agent's id and the oddities spliced in. */
function oddHeartbeat(p: Platform, agentId: string): string {
  const text = fixture(p);
  expect(text).toMatch(/^\{\n "agent_id": "[0-9a-f]+",\n/);
  expect(text.endsWith('\n}\n')).toBe(true);
  const head = text.replace(/^\{\n "agent_id": "[0-9a-f]+"/, `{\n "zz_first": 1.0,\n "agent_id": "${agentId}"`);
  return `${head.slice(0, -3)},\n "x_oddities":   ${ODDITIES}\n}\n`;
}

let t: TestApp;
let token: string;
let agentKey: string;
const clock = new FakeClock('2026-11-22T10:00:00Z');

beforeAll(async () => {
  t = await buildTestApp({ clock });
  token = await adminToken(t);
  agentKey = (await createKey(t.app, bearer(token), 'agent')).key;
});
afterAll(() => t.close());

async function register(key: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: body });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { agent_id: string }).agent_id;
}

const heartbeat = (text: string, key = agentKey) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/agent/heartbeat',
    headers: { ...apiKey(key), 'content-type': 'application/json' },
    payload: text,
  });

const getSystem = (id: string) => t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}/system`, headers: bearer(token) });
const getAgent = (id: string) => t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}`, headers: bearer(token) });

/** The agent's last heartbeat time and its stored body, read as the API reads it (whole, or joined from its parts). */
async function stored(id: string) {
  const row = await t.db.db.selectFrom('agents').select('last_heartbeat').where('id', '=', id).executeTakeFirstOrThrow();
  return { last_heartbeat: row.last_heartbeat, system: (await findSystemText(t.db.db, id))?.system ?? null };
}

describe('POST /agent/heartbeat stores the body byte for byte', () => {
  it.each(PLATFORMS)('returns a %s heartbeat exactly as sent, and updates the agent from it', async (p) => {
    // Registered with other values than the heartbeat carries, so the heartbeat's update is visible.
    const other = p === 'linux' ? 'windows' : 'linux';
    const id = await register(agentKey, { hostname: `registered-${p}`, platform: other, agent_version: '0.0.1' });
    const text = oddHeartbeat(p, id);
    const sent = JSON.parse(text) as { hostname: string; agent_version: string };
    expect(JSON.stringify(sent)).not.toBe(text); // a re-serialising server could not pass this test

    clock.set('2026-11-22T10:00:00.123Z');
    const res = await heartbeat(text);
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json() as Record<string, unknown>;
    expect(answer).toStrictEqual({ ok: true, status: 'online', server_time: '2026-11-22T10:00:00.123Z', update_available: false });

    const system = await getSystem(id);
    expect(system.statusCode).toBe(200);
    expect(system.headers['content-type']).toMatch(/^application\/json/);
    expect(system.body).toBe(text);
    expect(system.rawPayload.equals(Buffer.from(text, 'utf8'))).toBe(true);

    const agent = await getAgent(id);
    expect(agent.statusCode).toBe(200);
    expect(agent.headers['content-type']).toMatch(/^application\/json/);
    expect(agent.body.endsWith(`,"system":${text}}`)).toBe(true);
    expect(JSON.parse(agent.body)).toMatchObject({
      id,
      name: `registered-${p}`,
      hostname: sent.hostname,
      platform: p,
      customer_id: null,
      status: 'online',
      last_heartbeat: answer.server_time,
      update_requested: false,
      agent_version: sent.agent_version,
      connected: false,
      created_at: expect.any(String),
    });
  });

  it('shows the hint of the heartbeat key as last_api_key, "" before the first heartbeat', async () => {
    const customer = await createCustomer(t.app, token, 'HB-1');
    const key = await createKey(t.app, bearer(token), 'agent', customer.id);
    const id = await register(key.key, { hostname: 'hint-host', platform: 'linux' });
    const list = async () => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/customers/${customer.id}/agents`, headers: bearer(token) });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { id: string; last_api_key: string }[]).find((a) => a.id === id);
    };
    expect((await list())?.last_api_key).toBe('');
    expect((await heartbeat(`{"agent_id":"${id}","platform":"linux"}`, key.key)).statusCode).toBe(200);
    expect((await list())?.last_api_key).toBe(key.key_hint);
  });

  it('replaces the stored text with the next heartbeat', async () => {
    const id = await register(agentKey, { hostname: 'twice', platform: 'linux' });
    clock.set('2026-11-22T11:00:00Z');
    expect((await heartbeat(`{"agent_id": "${id}", "platform": "linux", "n": 1}`)).statusCode).toBe(200);
    clock.set('2026-11-22T11:01:00Z');
    const second = `{ "platform": "linux", "agent_id": "${id}", "n": 2.50 }`;
    expect((await heartbeat(second)).statusCode).toBe(200);
    expect((await getSystem(id)).body).toBe(second);
    expect((await stored(id)).last_heartbeat).toEqual(new Date('2026-11-22T11:01:00Z'));
  });

  it('stores a lone surrogate in hostname and version as U+FFFD, without failing the heartbeats batched with it', async () => {
    const odd = await register(agentKey, { hostname: 'odd', platform: 'linux' });
    const plain = await register(agentKey, { hostname: 'plain', platform: 'linux' });
    const [a, b] = await Promise.all([
      heartbeat(`{"agent_id":"${odd}","platform":"linux","hostname":"pc\\ud800-1","agent_version":"2.\\udc00"}`),
      heartbeat(`{"agent_id":"${plain}","platform":"linux","hostname":"plain-2"}`),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect((await getAgent(odd)).json()).toMatchObject({ hostname: 'pc\ufffd-1', agent_version: '2.\ufffd' });
    expect((await getAgent(plain)).json()).toMatchObject({ hostname: 'plain-2' });
  });

  it('stores bytes that are not UTF-8 as U+FFFD, without failing the heartbeats batched with it', async () => {
    const odd = await register(agentKey, { hostname: 'latin1', platform: 'linux' });
    const plain = await register(agentKey, { hostname: 'plain-3', platform: 'linux' });
    // "Müller" in Latin-1 (a lone 0xFC), and a truncated three-byte sequence before the closing quote.
    const bytes = Buffer.concat([
      Buffer.from(`{"agent_id":"${odd}","platform":"linux","owner":"M`),
      Buffer.from([0xfc]),
      Buffer.from('ller","cut":"'),
      Buffer.from([0xe6, 0x9d]),
      Buffer.from('"}'),
    ]);
    const [a, b] = await Promise.all([
      t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: { ...apiKey(agentKey), 'content-type': 'application/json' }, payload: bytes }),
      heartbeat(`{"agent_id":"${plain}","platform":"linux","n":3}`),
    ]);
    expect([a.statusCode, b.statusCode], a.body).toEqual([200, 200]);
    expect((await getSystem(odd)).body).toBe(`{"agent_id":"${odd}","platform":"linux","owner":"M\ufffdller","cut":"\ufffd"}`);
    expect((await getSystem(plain)).body).toBe(`{"agent_id":"${plain}","platform":"linux","n":3}`);
  });

  it('reads the declared fields as the schema says (agent_id in any case, hostname trimmed) and stores the body as sent', async () => {
    const id = await register(agentKey, { hostname: 'before-trim', platform: 'linux' });
    const text = `{"agent_id":"${id.toUpperCase()}","platform":"linux","hostname":"  trimmed-host  ","agent_version":"7.1","extra":{"agent_id":"kept"}}`;
    const res = await heartbeat(text);
    expect(res.statusCode, res.body).toBe(200);
    expect((await getAgent(id)).json()).toMatchObject({ id, hostname: 'trimmed-host', agent_version: '7.1', platform: 'linux' });
    expect((await getSystem(id)).body).toBe(text);
  });

  it('accepts a body between 1 MiB and 4 MiB (the heartbeat limit is 4 MiB)', async () => {
    const id = await register(agentKey, { hostname: 'big-one', platform: 'windows' });
    const text = `{"agent_id":"${id}","platform":"windows","pad":"${'x'.repeat(3 * MiB)}"}`;
    const res = await heartbeat(text);
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    expect((await getSystem(id)).body).toBe(text);
  });
});

describe('POST /agent/heartbeat errors', () => {
  let id: string;
  beforeAll(async () => {
    id = await register(agentKey, { hostname: 'errors', platform: 'linux' });
  });

  it('answers a body that is not JSON with 400', async () => {
    expectError(await heartbeat(`{"agent_id": "${id}", "platform": "linux",`), 400, 'INVALID_JSON');
  });

  it.each([
    ['agent_id is missing', () => '{"platform": "linux"}'],
    ['platform is missing', () => `{"agent_id": "${id}"}`],
    ['agent_id is not hex', () => '{"agent_id": "not-hex-not-hex-not-hex", "platform": "linux"}'],
    ['the platform is unknown', () => `{"agent_id": "${id}", "platform": "macos"}`],
    ['agent_sha256 is not 64 hexadecimal characters', () => `{"agent_id": "${id}", "platform": "linux", "agent_sha256": "abc"}`],
    ['the hostname holds a NUL', () => `{"agent_id": "${id}", "platform": "linux", "hostname": "a\\u0000b"}`],
    ['the hostname is too long', () => `{"agent_id": "${id}", "platform": "linux", "hostname": "${'h'.repeat(256)}"}`],
    ['the body is an array', () => `[{"agent_id": "${id}", "platform": "linux"}]`],
    ['the body is a string', () => '"heartbeat"'],
    ['the body is null', () => 'null'],
  ])('answers 400 VALIDATION_ERROR when %s', async (_case, body) => {
    const before = await stored(id);
    expectError(await heartbeat(body()), 400, 'VALIDATION_ERROR');
    expect(await stored(id)).toEqual(before);
  });

  it('answers 404 AGENT_NOT_REGISTERED for an unknown agent', async () => {
    expectError(await heartbeat('{"agent_id": "0123456789abcdef0123456789abcdef", "platform": "linux"}'), 404, 'AGENT_NOT_REGISTERED');
  });

  it('answers 413 for a body over 4 MiB', async () => {
    const text = `{"agent_id":"${id}","platform":"linux","pad":"${'x'.repeat(4 * MiB)}"}`;
    expectError(await heartbeat(text), 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('group commit', () => {
  it('answers 50 concurrent heartbeats of 10 agents, each agent keeping one of its own', async () => {
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => register(agentKey, { hostname: `gc-${i}`, platform: 'linux' })));
    const texts = new Map(ids.map((id) => [id, Array.from({ length: 5 }, (_, j) => `{"agent_id":"${id}","platform":"linux","seq":${j}}`)]));
    const sends = [0, 1, 2, 3, 4].flatMap((j) => ids.map((id) => texts.get(id)![j]!));
    const answers = await Promise.all(sends.map((text) => heartbeat(text)));
    expect(answers.map((r) => r.statusCode)).toEqual(sends.map(() => 200));
    for (const id of ids) expect(texts.get(id)).toContain((await getSystem(id)).body);
  });

  it('answers 503 SERVICE_UNAVAILABLE when the database fails', async () => {
    const own = await buildTestApp();
    try {
      const key = await createKey(own.app, bearer(await adminToken(own)), 'agent');
      const reg = await own.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key.key), payload: { hostname: 'h', platform: 'linux' } });
      expect(reg.statusCode, reg.body).toBe(200);
      const { agent_id } = reg.json() as { agent_id: string };
      await own.db.close();
      const res = await own.app.inject({
        method: 'POST',
        url: '/api/v1/agent/heartbeat',
        headers: { ...apiKey(key.key), 'content-type': 'application/json' },
        payload: `{"agent_id":"${agent_id}","platform":"linux"}`,
      });
      expectError(res, 503, 'SERVICE_UNAVAILABLE');
    } finally {
      await own.close();
    }
  });

  it('runs batch extensions in the batch statement: a failing extension write rolls the heartbeat back', async () => {
    const id = await register(agentKey, { hostname: 'hooked', platform: 'linux' });
    clock.set('2026-11-22T12:00:00Z');
    expect((await heartbeat(`{"agent_id":"${id}","platform":"linux","v":"old"}`)).statusCode).toBe(200);
    const before = await stored(id);

    const raw = `{"agent_id":"${id}","platform":"linux","v":"new"}`;
    let seenBatch: string[] = [];
    // Writes an event of a type the table refuses, for each agent the batch's update accepted.
    const writer = new HeartbeatWriter(t.db.db, [
      {
        columns: [{ name: 'event_type', type: 'text' }],
        read: (body) => body.agent_id,
        valuesFor: async (batch) => {
          seenBatch = batch.map(String);
          return batch.map(() => ({ event_type: 'no-such-type' }));
        },
        statement: 'insert into agent_events (agent_id, type, created_at) select v.id, v.event_type, now() from v join updated as u on u.ord = v.ord',
      },
    ]);
    const input: HeartbeatInput = {
      agentId: id,
      platform: 'linux',
      hostname: 'changed',
      agentVersion: null,
      agentSha256: null,
      raw: Buffer.from(raw),
      parsed: JSON.parse(raw) as Record<string, unknown>,
      keyHint: null,
      scope: null,
      receivedAt: new Date('2026-11-22T12:05:00Z'),
    };
    await expect(writer.write(input)).rejects.toThrow(/check constraint/);
    expect(seenBatch).toEqual([id]);
    expect(await stored(id)).toEqual(before);
    expect(before.last_heartbeat).toEqual(new Date('2026-11-22T12:00:00Z'));
    expect((await getAgent(id)).json()).toMatchObject({ hostname: 'hooked' });
  });
});
