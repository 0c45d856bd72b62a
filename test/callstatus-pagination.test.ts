// The call-status service's lists page like the RMM server's (issue 29, item 5): `limit` and the
// `Link: <…>; rel="next"` cursor on the admin lists, the activity log (newest first, default 100, past
// the newest 1,000) and the attendance list; without `limit` the "all" lists still answer everything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './helpers/assertions.js';
import { addDevice, addUser, create, startCallstatus, type CallstatusTest } from './helpers/callstatus.js';
import { expectPagesJoinToWhole, nextLink, walkPages } from './helpers/paging.js';

const ACTIVITY = 1_300;
let t: CallstatusTest;
let auth: Record<string, string>;

beforeAll(async () => {
  t = await startCallstatus();
  auth = { authorization: `Bearer ${t.adminToken!}` };
  const device = await addDevice(t, '127.0.0.1:9');
  await addDevice(t, '127.0.0.1:10');
  for (const [n, name] of ['Zora', 'anna', 'Bert', 'Anna', 'Carl'].entries()) {
    await addUser(t, { name, attendance: n % 2 ? 'anwesend' : 'homeoffice', assignments: [{ deviceId: device, segment: n }] });
  }
  for (const key of ['phone_active', 'available', 'homeoffice']) await create(t, 'colors', { status_key: key, r: 1, g: 2, b: 3 });
  const start = Date.parse('2026-05-01T10:00:00Z');
  await t.db.db
    .insertInto('callstatus_activity')
    .values(Array.from({ length: ACTIVITY }, (_, i) => ({ time: new Date(start + Math.floor(i / 2) * 1000), user_id: null, user_name: `u${i}`, attendance: 'anwesend', new_status: 'x', action: 'phone_active', request: 'r', result: 'HTTP 200' })))
    .execute();
}, 60_000);
afterAll(() => t?.close());

const expectPagesMatch = (url: string, limit: number) => expectPagesJoinToWhole(t.app, url, url, limit, auth);

describe('call-status lists', () => {
  it.each(['users', 'devices', 'assignments', 'colors'])('/api/admin/%s pages by id and joins to the whole list', async (resource) => {
    const all = await expectPagesMatch(`/api/admin/${resource}`, 1);
    expect(all.map((r) => r.id)).toEqual([...all.map((r) => r.id as number)].sort((a, b) => a - b));
  });

  it('attendance and the current states page by display name', async () => {
    const attendance = await expectPagesMatch('/api/attendance', 2);
    expect(attendance.map((a) => a.user)).toEqual(['Anna', 'Bert', 'Carl', 'Zora', 'anna']);
    const state = await expectPagesMatch('/api/admin/state', 2);
    expect(state).toHaveLength(5);
  });

  it('the activity log answers 100 by default and reaches its oldest row past the newest 1,000', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/api/admin/activity', headers: auth });
    expect((first.json() as unknown[]).length).toBe(100);
    expect(nextLink(first)).toMatch(/^\/api\/admin\/activity\?cursor=/);
    const walk = await walkPages<{ user: string; time: string }>(t.app, '/api/admin/activity?limit=1000', auth);
    expect(walk.urls).toHaveLength(2);
    const seeded = walk.items.filter((r) => /^u\d+$/.test(r.user));
    expect(seeded.map((r) => r.user)).toEqual(Array.from({ length: ACTIVITY }, (_, i) => `u${ACTIVITY - 1 - i}`));
  });

  it('refuses a bad limit or cursor with 400 and the error body', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/api/admin/users?limit=0', headers: auth }), 400, 'VALIDATION_ERROR');
    expectError(await t.app.inject({ method: 'GET', url: '/api/attendance?cursor=%%%', headers: auth }), 400, 'VALIDATION_ERROR');
    const users = await t.app.inject({ method: 'GET', url: '/api/admin/users?limit=1', headers: auth });
    const cursor = new URL(nextLink(users)!, 'http://x').searchParams.get('cursor')!;
    expectError(await t.app.inject({ method: 'GET', url: `/api/admin/devices?limit=1&cursor=${cursor}`, headers: auth }), 400, 'VALIDATION_ERROR');
  });
});
