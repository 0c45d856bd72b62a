// Issue 9 acceptance 2 and 3: an unreachable or slow light still gives `OK:` and the activity log keeps
// the error; attendance updates (callstatus.md §4 POST/GET /api/attendance) with every error row, the
// personnel-number matching, and no light or phone_active change. Also the admin API of contract §12.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectError } from './helpers/assertions.js';
import {
  activity,
  addDevice,
  addUser,
  callEvent,
  create,
  setAttendance,
  startCallstatus,
  startFakeWled,
  stateOf,
  unreachableHostname,
  type CallstatusTest,
  type FakeWled,
} from './helpers/callstatus.js';

let devices: FakeWled[] = [];
async function device(options?: Parameters<typeof startFakeWled>[0]): Promise<FakeWled> {
  const wled = await startFakeWled(options);
  devices.push(wled);
  return wled;
}
afterEach(async () => {
  await Promise.all(devices.map((d) => d.close()));
  devices = [];
});

let t: CallstatusTest;
beforeAll(async () => {
  t = await startCallstatus();
});
afterAll(() => t.close());

describe('a light that fails does not fail the call (acceptance 2)', () => {
  /** The activity row of the user's call start, once written, which must carry an error, not `HTTP 200`. */
  const expectLoggedError = async (name: string, hostname: string) => {
    await vi.waitFor(async () => expect(await activity(t, name)).toHaveLength(1), { timeout: 15_000, interval: 100 });
    const [row] = await activity(t, name);
    expect(row).toMatchObject({ user: name, attendance: 'anwesend', new_status: 'phone_active', action: 'phone_active' });
    expect(row!.request).toContain(hostname);
    expect(row!.result).not.toMatch(/^HTTP 2/);
    expect(row!.result.trim()).not.toBe('');
  };

  it('an unreachable device (nothing listening): OK, phone_active 1, the error in the activity log', async () => {
    const hostname = await unreachableHostname();
    const user = await addUser(t, { name: 'Unreachable-light user', attendance: 'anwesend', assignments: [{ deviceId: await addDevice(t, hostname), segment: 0 }] });
    expect(await callEvent(t, 'GET', user.extension, 'callstart')).toMatch(/^OK:/);
    expect((await stateOf(t, user.id))?.phone_active).toBe(1);
    await expectLoggedError(user.name, hostname);
  });

  it.each([
    ['answers after 10 s', { delayMs: 10_000 }],
    ['never answers', { hang: true }],
  ])('a device that %s: OK arrives while the device still holds the request', async (_what, options) => {
    const wled = await device(options);
    const user = await addUser(t, { name: `Slow-light user ${_what}`, attendance: 'anwesend', assignments: [{ deviceId: await addDevice(t, wled.hostname), segment: 0 }] });
    expect(await callEvent(t, 'POST', user.extension, 'callstart')).toMatch(/^OK:/);
    expect(wled.requests).toHaveLength(1);
    expect(wled.answered).toBe(0);
    await expectLoggedError(user.name, wled.hostname);
  });
});

describe('POST /api/attendance/{personal_nr}', () => {
  const post = (nr: string, payload?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: `/api/attendance/${encodeURIComponent(nr)}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  /** Status 400/404 with an `error` string, as callstatus.md §7. */
  const expectErrorText = (res: Awaited<ReturnType<typeof post>>, status: number) => {
    expect(res.statusCode, res.body).toBe(status);
    const body = res.json() as { error: unknown };
    expect(typeof body.error).toBe('string');
    return body.error as string;
  };

  it('answers every error row: 400 missing body or status, 400 naming the allowed values, 404 unknown or inactive', async () => {
    const wled = await device();
    const deviceId = await addDevice(t, wled.hostname);
    const user = await addUser(t, { name: 'Error-row user', assignments: [{ deviceId, segment: 0 }] });
    const inactive = await addUser(t, { name: 'Inactive user', active: false, assignments: [{ deviceId, segment: 1 }] });
    const unassigned = await addUser(t, { name: 'Unassigned user' });

    expectErrorText(await post(user.personalNr), 400);
    expectErrorText(await post(user.personalNr, '', { 'content-type': 'application/json' }), 400);
    expectErrorText(await post(user.personalNr, {}), 400);
    expectErrorText(await post(user.personalNr, { state: 'anwesend' }), 400);
    for (const status of ['krank', 'Anwesend', 'unbekannt', 5]) {
      const error = expectErrorText(await post(user.personalNr, { status }), 400);
      for (const allowed of ['anwesend', 'abwesend', 'homeoffice']) expect(error).toContain(allowed);
    }
    expectErrorText(await post('999999', { status: 'anwesend' }), 404);
    expectErrorText(await post(inactive.personalNr, { status: 'anwesend' }), 404);
    expectErrorText(await post(unassigned.personalNr, { status: 'anwesend' }), 404);
    expect(await stateOf(t, user.id)).toBeUndefined();
    expect(await stateOf(t, inactive.id)).toBeUndefined();
  });

  it('succeeds with {ok, user, status}; `~` and spaces are ignored on both sides', async () => {
    const deviceId = await addDevice(t, (await device()).hostname);
    const plain = await addUser(t, { name: 'Plain-number user', personalNr: '1234', assignments: [{ deviceId, segment: 0 }] });
    const decorated = await addUser(t, { name: 'Decorated-number user', personalNr: '56~78', assignments: [{ deviceId, segment: 1 }] });

    expect(await setAttendance(t, '~12 34', 'homeoffice')).toEqual({ ok: true, user: plain.name, status: 'homeoffice' });
    expect(await setAttendance(t, '5678', 'abwesend')).toEqual({ ok: true, user: decorated.name, status: 'abwesend' });
    expect(await setAttendance(t, '1234', 'anwesend')).toEqual({ ok: true, user: plain.name, status: 'anwesend' });
    expect(await stateOf(t, plain.id)).toMatchObject({ attendance: 'anwesend', phone_active: 0 });
    expect(await stateOf(t, decorated.id)).toMatchObject({ attendance: 'abwesend', phone_active: 0 });
  });

  it('changes no light and not phone_active (acceptance 3)', async () => {
    const wled = await device();
    const user = await addUser(t, { name: 'Attendance-only user', attendance: 'anwesend', assignments: [{ deviceId: await addDevice(t, wled.hostname), segment: 4 }] });
    expect(await stateOf(t, user.id)).toMatchObject({ attendance: 'anwesend', phone_active: 0 });

    expect(await callEvent(t, 'GET', user.extension, 'callstart')).toMatch(/^OK:/);
    await wled.waitForStates(1);
    for (const status of ['homeoffice', 'abwesend', 'anwesend']) {
      await setAttendance(t, user.personalNr, status);
      expect(await stateOf(t, user.id)).toMatchObject({ attendance: status, phone_active: 1 });
    }

    // The call end queues behind anything the attendance updates could have sent to the device.
    expect(await callEvent(t, 'GET', user.extension, 'callend')).toMatch(/^OK:/);
    await wled.waitForStates(2);
    expect(wled.requests).toHaveLength(2);
    await vi.waitFor(async () => expect(await activity(t, user.name)).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect((await activity(t, user.name)).map((r) => r.action)).toEqual(['phone_end', 'phone_active']);
  });
});

describe('GET /api/attendance', () => {
  it('lists active users (assigned or not) by display name, `unbekannt` without attendance, inactive users absent', async () => {
    const own = await startCallstatus();
    try {
      const deviceId = await addDevice(own, '127.0.0.1:9');
      await addUser(own, { name: 'Carla Zorn', personalNr: '~30 01', attendance: 'homeoffice', assignments: [{ deviceId, segment: 0 }] });
      await addUser(own, { name: 'Aaron Alt', personalNr: '3002', active: false, assignments: [{ deviceId, segment: 1 }] });
      await addUser(own, { name: 'Bernd Adler', personalNr: '3003', attendance: 'abwesend', assignments: [{ deviceId, segment: 2 }] });
      await addUser(own, { name: 'Anna Berg', personalNr: '3004', assignments: [{ deviceId, segment: 3 }] });
      // Listed too: the spec lists active users, with or without a light.
      await addUser(own, { name: 'Dora Ost', personalNr: '3005' });

      const res = await own.app.inject({ method: 'GET', url: '/api/attendance' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual([
        { user: 'Anna Berg', personal_nr: '3004', status: 'unbekannt' },
        { user: 'Bernd Adler', personal_nr: '3003', status: 'abwesend' },
        { user: 'Carla Zorn', personal_nr: '~30 01', status: 'homeoffice' },
        { user: 'Dora Ost', personal_nr: '3005', status: 'unbekannt' },
      ]);
    } finally {
      await own.close();
    }
  });
});

describe('admin API (contract §12)', () => {
  const PATHS = ['/api/admin/users', '/api/admin/devices', '/api/admin/assignments', '/api/admin/colors', '/api/admin/activity', '/api/admin/state'];

  it('answers 404 everywhere while no token is configured', async () => {
    const disabled = await startCallstatus({ adminToken: null });
    try {
      for (const url of PATHS) {
        expect((await disabled.app.inject({ method: 'GET', url })).statusCode).toBe(404);
        expect((await disabled.admin('GET', url)).statusCode).toBe(404);
      }
    } finally {
      await disabled.close();
    }
  });

  it('answers 401 without the token or with a wrong one', async () => {
    for (const url of PATHS) {
      expectError(await t.app.inject({ method: 'GET', url }), 401, 'UNAUTHORIZED');
      expectError(await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${t.adminToken}x` } }), 401, 'UNAUTHORIZED');
    }
    for (const url of PATHS.slice(0, 4)) expectError(await t.app.inject({ method: 'POST', url, payload: {} }), 401, 'UNAUTHORIZED');
  });

  it.each([
    ['users', { directory_id: 'ad-1', display_name: 'Round Trip', extension: '777', personal_nr: '77 7', active: true }, { display_name: 'Round Trip Renamed', active: false }],
    ['devices', { name: 'Desk strip', hostname: 'wled-desk.local:8080' }, { name: 'Window strip', hostname: '10.0.0.7' }],
    ['colors', { status_key: 'round_trip', r: 1, g: 2, b: 3, effect: 'Blink' }, { r: 250, effect: '' }],
  ] as const)('%s: create 201, list, PUT, DELETE', async (resource, body, change) => {
    await roundTrip(resource, body, change);
  });

  it('assignments: create 201, list, PUT, DELETE', async () => {
    const user = await create(t, 'users', { display_name: 'Assigned', extension: '', personal_nr: '', directory_id: '', active: true });
    const deviceId = await addDevice(t, '127.0.0.1:9');
    await roundTrip('assignments', { user_id: user.id, device_id: deviceId, segment: 0 }, { segment: 7 });
  });

  it('PUT changes only the fields given: deactivating a user keeps the extension', async () => {
    const user = await create(t, 'users', { directory_id: 'ad-2', display_name: 'Partial Put', extension: '4242', personal_nr: '42 42', active: true });
    const res = await t.admin('PUT', `/api/admin/users/${user.id}`, { active: false });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ...user, active: false });
  });

  it('refuses a duplicate color status_key with 409 and an invalid hostname with 400', async () => {
    await create(t, 'colors', { status_key: 'duplicate_key', r: 0, g: 0, b: 0, effect: '' });
    expect((await t.admin('POST', '/api/admin/colors', { status_key: 'duplicate_key', r: 9, g: 9, b: 9, effect: '' })).statusCode).toBe(409);
    for (const hostname of ['', 'http://evil.example/x', 'host name', 'a/b', 'host:port', 'user@host']) {
      const res = await t.admin('POST', '/api/admin/devices', { name: 'Bad', hostname });
      expect(res.statusCode, `${hostname}: ${res.body}`).toBe(400);
    }
  });

  async function roundTrip(resource: string, body: Record<string, unknown>, change: Record<string, unknown>) {
    const url = `/api/admin/${resource}`;
    const created = await create(t, resource as 'users', body);
    expect(created).toMatchObject(body);
    expect((await t.admin('GET', url)).json()).toContainEqual(created);

    const put = await t.admin('PUT', `${url}/${created.id}`, { ...body, ...change });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toEqual({ ...created, ...change });
    expect((await t.admin('GET', url)).json()).toContainEqual({ ...created, ...change });

    expect([200, 204]).toContain((await t.admin('DELETE', `${url}/${created.id}`)).statusCode);
    expect((await t.admin('GET', url)).json()).not.toContainEqual(expect.objectContaining({ id: created.id }));
    expect((await t.admin('PUT', `${url}/${created.id}`, { ...body, ...change })).statusCode).toBe(404);
    expect((await t.admin('DELETE', `${url}/${created.id}`)).statusCode).toBe(404);
  }
});
