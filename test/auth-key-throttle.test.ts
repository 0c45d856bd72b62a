// API-key guessing (issue 29, item 4; issue 57, item 5): wrong or empty keys are counted per source
// address (TRUST_PROXY honoured, IPv6 by /64); after 30 in 5 minutes every wrong key from there is 429
// with Retry-After until the window has passed, and no more than 30 are let through however many arrive
// at once. A valid key is always accepted, whoever else guessed from its address (every agent behind
// one NAT). Each throttled address is one warn line and one audit entry per period, never one per
// attempt and never with a key. Bearer tokens and other addresses carry on.
import { randomBytes } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createKey } from './helpers/identity.js';

const clock = new FakeClock('2026-11-25T10:00:00Z');
let t: TestApp;
let token: string;
let adminKey: string;
let agentKey: string;
let agentId: string;
const guessed: string[] = [];

beforeAll(async () => {
  t = await buildTestApp({ clock, captureLogs: true, env: { TRUST_PROXY: 'true' } });
  token = await adminToken(t);
  adminKey = (await createKey(t.app, bearer(token), 'admin')).key;
  agentKey = (await createKey(t.app, bearer(token), 'agent')).key;
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: { 'x-api-key': agentKey }, payload: { hostname: 'throttled-site', platform: 'linux' } });
  agentId = (res.json() as { agent_id: string }).agent_id;
});
afterAll(() => t.close());

const from = (ip: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url: '/api/v1/agents', headers: { 'x-forwarded-for': ip, ...headers } });

/** A random key of the right shape, as a guesser sends them. */
function guess(ip: string) {
  const key = `rmm_${randomBytes(24).toString('base64url')}`;
  guessed.push(key);
  return from(ip, { 'x-api-key': key });
}

async function guesses(ip: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await guess(ip)).statusCode);
  return statuses;
}

async function rejectedEntries(ip: string): Promise<Array<Record<string, unknown>>> {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/audit?action=auth.api_key_rejected', headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as Array<Record<string, unknown>>).filter((e) => e.ip === ip);
}

const summaryLines = (ip: string) => t.logs().filter((l) => l.includes(`failed API-key attempts from ${ip} `));

describe('API-key guessing', () => {
  it('is stopped after 30 wrong keys: 429 TOO_MANY_ATTEMPTS with Retry-After; a valid key from there still works', async () => {
    expect(await guesses('203.0.113.7', 100)).toEqual([...Array<number>(30).fill(401), ...Array<number>(70).fill(429)]);
    const refused = await guess('203.0.113.7');
    expectError(refused, 429, 'TOO_MANY_ATTEMPTS');
    expect(refused.headers['retry-after']).toBe('300');
    // Someone else's guesses never lock out a valid key (every agent behind that NAT) ...
    expect((await from('203.0.113.7', { 'x-api-key': adminKey })).statusCode).toBe(200);
    // ... and a guesser holding one valid key cannot reset the count with it.
    expectError(await guess('203.0.113.7'), 429, 'TOO_MANY_ATTEMPTS');

    // Elsewhere keys work, and a signed-in user's token works from the throttled address too.
    expect((await from('198.51.100.1', { 'x-api-key': adminKey })).statusCode).toBe(200);
    expect((await from('203.0.113.7', bearer(token))).statusCode).toBe(200);
    // Bad tokens are not counted: they cannot be guessed, and an expired session is no attack.
    for (let i = 0; i < 40; i++) expect((await from('198.51.100.2', bearer(`bad.${i}.token`))).statusCode).toBe(401);
    expect((await from('198.51.100.2', { 'x-api-key': adminKey })).statusCode).toBe(200);
  });

  it('counts empty keys too (api_key in the query, as WebSocket clients send it)', async () => {
    for (let i = 0; i < 30; i++) expect((await t.app.inject({ method: 'GET', url: '/api/v1/agents?api_key=', headers: { 'x-forwarded-for': '198.51.100.9' } })).statusCode).toBe(401);
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/agents?api_key=', headers: { 'x-forwarded-for': '198.51.100.9' } }), 429, 'TOO_MANY_ATTEMPTS');
    expectError(await guess('198.51.100.9'), 429, 'TOO_MANY_ATTEMPTS');
  });

  it('lets no more than 30 of 50 concurrent wrong keys through to a 401', async () => {
    const statuses = (await Promise.all(Array.from({ length: 50 }, () => guess('198.51.100.77')))).map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    // A valid key sent along with a burst of wrong ones is accepted too.
    const mixed = await Promise.all([...Array.from({ length: 10 }, () => guess('198.51.100.77')), from('198.51.100.77', { 'x-api-key': adminKey })]);
    expect(mixed.map((r) => r.statusCode)).toEqual([...Array<number>(10).fill(429), 200]);
  });

  it('is one warn line and one audit entry when the address crosses the limit, without any key', async () => {
    expect(summaryLines('203.0.113.7')).toHaveLength(1);
    const line = JSON.parse(summaryLines('203.0.113.7')[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 40, msg: '30 failed API-key attempts from 203.0.113.7 in the last 1 s; throttled until 2026-11-25T10:05:00.000Z' });
    const entries = await rejectedEntries('203.0.113.7');
    expect(entries).toEqual([
      expect.objectContaining({ actor_type: 'api_key', actor: 'unknown key, 30 attempts in 1 s', action: 'auth.api_key_rejected', method: 'GET', path: '/api/v1/agents', status_code: 429 }),
    ]);
    const everything = [...t.logs(), JSON.stringify(entries)].join('\n');
    expect(guessed.filter((key) => everything.includes(key))).toEqual([]);
    expect(everything).not.toContain(adminKey);
  });

  it('lets the address in again after 5 minutes, and reports a guesser that goes on once per period', async () => {
    await clock.advance(5 * 60_000);
    expect((await from('203.0.113.7', { 'x-api-key': adminKey })).statusCode).toBe(200);
    expect(await guesses('203.0.113.7', 40)).toEqual([...Array<number>(30).fill(401), ...Array<number>(10).fill(429)]);
    expect(summaryLines('203.0.113.7')).toHaveLength(2);
    // 30 + the 72 refused in the first window (70 guesses, one more, one after the valid key), then 30 again.
    expect((await rejectedEntries('203.0.113.7'))[0]).toMatchObject({ actor: 'unknown key, 102 attempts in 300 s', status_code: 429 });
  });

  it('counts an IPv6 network by its /64', async () => {
    expect(await guesses('2001:db8:1:2::a', 15)).toEqual(Array<number>(15).fill(401));
    expect(await guesses('2001:db8:1:2:ffff:ffff:ffff:ffff', 15)).toEqual(Array<number>(15).fill(401));
    expectError(await guess('2001:db8:1:2::c'), 429, 'TOO_MANY_ATTEMPTS');
    expect((await guess('2001:db8:1:3::1')).statusCode).toBe(401);
    expect(await rejectedEntries('2001:db8:1:2::/64')).toHaveLength(1);
  });

  it('refuses a wrong key on the agent WebSocket from a throttled address with 429 before the upgrade, and lets the agent in', async () => {
    await guesses('192.0.2.50', 30);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const upgrade = (key: string) => new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let text = '';
      socket.on('data', (c: Buffer) => {
        text += c.toString('utf8');
        // An accepted upgrade stays open: no need to wait for an end that never comes.
        if (text.startsWith('HTTP/1.1 101')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      const lines = [`GET /api/v1/agent/ws?agent_id=${agentId} HTTP/1.1`, 'Host: localhost', 'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, `X-API-Key: ${key}`, 'X-Forwarded-For: 192.0.2.50'];
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    const answer = await upgrade(`rmm_${randomBytes(24).toString('base64url')}`);
    expect(answer).toMatch(/^HTTP\/1\.1 429 /);
    expect(answer).toMatch(/\r\nretry-after: \d+\r\n/i);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toContain('"code":"TOO_MANY_ATTEMPTS"');
    expect(await upgrade(agentKey)).toMatch(/^HTTP\/1\.1 101 /);
  });
});
