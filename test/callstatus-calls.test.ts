// Issue 9 acceptance 1 and 4: every row of callstatus.md's state table and every call-endpoint outcome,
// against fake WLED devices (real HTTP servers recording what they receive), GET and POST alike; the
// exact light request of contract §12; and one request at a time per device under concurrent calls.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
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
  type CallstatusTest,
  type FakeWled,
} from './helpers/callstatus.js';

/** The light request of contract §12 for one segment. */
const wledState = (segment: number, [r, g, b]: readonly number[], fx = 0) => ({ on: true, seg: [{ id: segment, on: true, col: [[r, g, b]], fx }] });

const RED = [255, 0, 0] as const;
const GREEN = [0, 160, 0] as const;
const BLUE = [0, 0, 200] as const;

let devices: FakeWled[] = [];
/** A fresh fake device per test, so each test sees only its own requests. */
async function device(options?: Parameters<typeof startFakeWled>[0]): Promise<FakeWled> {
  const wled = await startFakeWled(options);
  devices.push(wled);
  return wled;
}
afterEach(async () => {
  await Promise.all(devices.map((d) => d.close()));
  devices = [];
});

describe('call endpoints with color rules for every status', () => {
  let t: CallstatusTest;
  beforeAll(async () => {
    t = await startCallstatus();
    await create(t, 'colors', { status_key: 'phone_active', r: RED[0], g: RED[1], b: RED[2], effect: '' });
    await create(t, 'colors', { status_key: 'available', r: GREEN[0], g: GREEN[1], b: GREEN[2], effect: '' });
    await create(t, 'colors', { status_key: 'homeoffice', r: BLUE[0], g: BLUE[1], b: BLUE[2], effect: '' });
  });
  afterAll(() => t.close());

  it('GET / answers a plain-text usage description naming the endpoints', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    for (const part of ['/callstart', '/callend', '/api/attendance']) expect(res.body).toContain(part);
  });

  describe.each(['GET', 'POST'] as const)('%s', (method) => {
    it.each([
      ['anwesend', 'available', GREEN],
      ['homeoffice', 'homeoffice', BLUE],
    ] as const)('%s: call start shows phone_active, call end shows %s, from phone_active 0 and 1 alike', async (attendance, endStatus, endColor) => {
      const wled = await device();
      const user = await addUser(t, { name: `${method} ${attendance} user`, attendance, assignments: [{ deviceId: await addDevice(t, wled.hostname), segment: 2 }] });
      expect(await stateOf(t, user.id)).toMatchObject({ attendance, phone_active: 0 });

      // Start from phone_active 0, then again from 1.
      for (const round of [1, 2]) {
        const text = await callEvent(t, method, user.extension, 'callstart');
        expect(text).toMatch(/^OK:/);
        expect(text).toContain(user.name);
        expect(text).toMatch(/start/i);
        await wled.waitForStates(round);
        expect((await stateOf(t, user.id))?.phone_active).toBe(1);
      }
      // End from phone_active 1, then again from 0.
      for (const round of [3, 4]) {
        const text = await callEvent(t, method, user.extension, 'callend');
        expect(text).toMatch(/^OK:/);
        expect(text).toContain(user.name);
        expect(text).toMatch(/end/i);
        await wled.waitForStates(round);
        expect((await stateOf(t, user.id))?.phone_active).toBe(0);
      }

      expect(wled.stateBodies()).toEqual([wledState(2, RED), wledState(2, RED), wledState(2, endColor), wledState(2, endColor)]);
      await vi.waitFor(async () => expect(await activity(t, user.name)).toHaveLength(4), { timeout: 10_000, interval: 20 });
      const rows = await activity(t, user.name);
      const started = { user: user.name, attendance, new_status: 'phone_active', action: 'phone_active', result: 'HTTP 200' };
      const ended = { user: user.name, attendance, new_status: endStatus, action: 'phone_end', result: 'HTTP 200' };
      // Newest first.
      expect(rows).toMatchObject([ended, ended, started, started]);
      for (const row of rows) expect(row.request).toContain(wled.hostname);
    });

    it.each(['abwesend', undefined] as const)('attendance %s: start and end are Ignored, naming the user; nothing changes, no light request', async (attendance) => {
      const wled = await device();
      const deviceId = await addDevice(t, wled.hostname);
      const absent = await addUser(t, { name: `${method} ${attendance ?? 'unbekannt'} user`, attendance, assignments: [{ deviceId, segment: 0 }] });
      const before = await stateOf(t, absent.id);

      for (const event of ['callstart', 'callend'] as const) {
        const text = await callEvent(t, method, absent.extension, event);
        expect(text).toMatch(/^Ignored:/);
        expect(text).toContain(absent.name);
      }
      expect(await stateOf(t, absent.id)).toEqual(before);
      expect(await activity(t, absent.name)).toEqual([]);

      // A present user's call on the same device queues behind anything the ignored calls could have
      // sent: once it arrives, the device has seen all there is.
      const present = await addUser(t, { name: `${method} witness of ${absent.name}`, attendance: 'anwesend', assignments: [{ deviceId, segment: 1 }] });
      expect(await callEvent(t, method, present.extension, 'callstart')).toMatch(/^OK:/);
      await wled.waitForStates(1);
      expect(wled.requests.map((r) => r.body)).toEqual([wledState(1, RED)]);
    });

    it('an extension without an active, assigned user is an Unknown extension', async () => {
      const wled = await device();
      const deviceId = await addDevice(t, wled.hostname);
      const inactive = await addUser(t, { name: `${method} inactive user`, active: false, assignments: [{ deviceId, segment: 0 }] });
      const unassigned = await addUser(t, { name: `${method} unassigned user` });

      for (const event of ['callstart', 'callend'] as const) {
        expect(await callEvent(t, method, '123', event)).toMatch(/^Unknown extension: 123/);
        for (const user of [inactive, unassigned]) {
          expect(await callEvent(t, method, user.extension, event)).toMatch(new RegExp(`^Unknown extension: ${user.extension}`));
        }
      }
      expect(wled.requests).toEqual([]);
      expect(await activity(t, inactive.name)).toEqual([]);
    });
  });

  it('a user with two assignments gets one request per assignment (two devices, two segments)', async () => {
    const [first, second] = [await device(), await device()];
    const [firstId, secondId] = [await addDevice(t, first.hostname), await addDevice(t, second.hostname)];
    const user = await addUser(t, {
      name: 'Two-light user',
      attendance: 'homeoffice',
      assignments: [
        { deviceId: firstId, segment: 0 },
        { deviceId: firstId, segment: 3 },
        { deviceId: secondId, segment: 1 },
      ],
    });

    expect(await callEvent(t, 'POST', user.extension, 'callstart')).toMatch(/^OK:/);
    await first.waitForStates(2);
    await second.waitForStates(1);
    expect(first.stateBodies()).toEqual(expect.arrayContaining([wledState(0, RED), wledState(3, RED)]));
    expect(first.stateBodies()).toHaveLength(2);
    expect(second.stateBodies()).toEqual([wledState(1, RED)]);
    await vi.waitFor(async () => expect(await activity(t, user.name)).toHaveLength(3), { timeout: 10_000, interval: 20 });
    expect((await activity(t, user.name)).every((row) => row.action === 'phone_active' && row.result === 'HTTP 200')).toBe(true);
  });

  it('concurrent call starts of users sharing a device reach it one request at a time (acceptance 4)', async () => {
    // A device that takes a moment to answer, so requests sent in parallel would overlap.
    const wled = await device({ delayMs: 150 });
    const deviceId = await addDevice(t, wled.hostname);
    const users = [];
    for (const segment of [0, 1, 2, 3]) {
      users.push(await addUser(t, { name: `Shared-strip user ${segment}`, attendance: 'anwesend', assignments: [{ deviceId, segment }] }));
    }

    const answers = await Promise.all(users.map((u) => callEvent(t, 'GET', u.extension, 'callstart')));
    for (const text of answers) expect(text).toMatch(/^OK:/);
    await wled.waitForStates(users.length);

    expect(wled.requests.filter((r) => r.overlapped)).toEqual([]);
    expect(wled.stateBodies()).toEqual(expect.arrayContaining(users.map((_, segment) => wledState(segment, RED))));
    expect(wled.stateBodies()).toHaveLength(users.length);
  });
});

describe('colors: the default color and effects', () => {
  let t: CallstatusTest;
  beforeAll(async () => {
    t = await startCallstatus();
  });
  afterAll(() => t.close());

  it('without a rule the color is 200/200/200, solid', async () => {
    const wled = await device();
    const user = await addUser(t, { name: 'Default-color user', attendance: 'anwesend', assignments: [{ deviceId: await addDevice(t, wled.hostname), segment: 0 }] });
    await callEvent(t, 'GET', user.extension, 'callstart');
    await callEvent(t, 'GET', user.extension, 'callend');
    await wled.waitForStates(2);
    expect(wled.stateBodies()).toEqual([wledState(0, [200, 200, 200]), wledState(0, [200, 200, 200])]);
  });

  it('effect "" is 0, a number string is that index, a name is its index from /json/eff (looked up once)', async () => {
    const rule = await create(t, 'colors', { status_key: 'phone_active', r: 10, g: 20, b: 30, effect: '' });
    const wled = await device();
    const user = await addUser(t, { name: 'Effect user', attendance: 'anwesend', assignments: [{ deviceId: await addDevice(t, wled.hostname), segment: 5 }] });

    const steps: Array<[effect: string, fx: number]> = [
      ['', 0],
      ['7', 7],
      ['Wipe', 3],
      ['Breathe', 2],
    ];
    for (const [n, [effect, fx]] of steps.entries()) {
      const res = await t.admin('PUT', `/api/admin/colors/${rule.id}`, { status_key: 'phone_active', r: 10, g: 20, b: 30, effect });
      expect(res.statusCode, res.body).toBe(200);
      expect(await callEvent(t, 'POST', user.extension, 'callstart')).toMatch(/^OK:/);
      await wled.waitForStates(n + 1);
      expect(wled.stateBodies()[n]).toEqual(wledState(5, [10, 20, 30], fx));
    }
    expect(wled.requests.filter((r) => r.method === 'GET' && r.path === '/json/eff')).toHaveLength(1);
    expect(wled.requests.filter((r) => r.overlapped)).toEqual([]);
  });

  it('a call end after a change to homeoffice uses the homeoffice rule', async () => {
    await create(t, 'colors', { status_key: 'homeoffice', r: 1, g: 2, b: 3, effect: '1' });
    const wled = await device();
    const user = await addUser(t, { name: 'Homeoffice rule user', attendance: 'anwesend', assignments: [{ deviceId: await addDevice(t, wled.hostname), segment: 0 }] });
    await setAttendance(t, user.personalNr, 'homeoffice');
    expect(await callEvent(t, 'GET', user.extension, 'callend')).toMatch(/^OK:/);
    await wled.waitForStates(1);
    expect(wled.stateBodies()).toEqual([wledState(0, [1, 2, 3], 1)]);
  });
});
