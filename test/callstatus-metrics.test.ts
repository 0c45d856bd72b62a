// The call-status service's GET /metrics (issue 34): call events by outcome and light requests by result
// and latency move with real traffic (a fake WLED device that answers, one that is not there); the
// exposition passes promtool; it is closed to requests that came through a proxy.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDevice, addUser, callEvent, startCallstatus, startFakeWled, unreachableHostname, type CallstatusTest, type FakeWled } from './helpers/callstatus.js';

const PROMTOOL = '/usr/bin/promtool';

let t: CallstatusTest;
let wled: FakeWled;

const scrape = async (headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url: '/metrics', headers });
const sample = (text: string, line: string) => Number(new RegExp(`^${line.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);

beforeAll(async () => {
  t = await startCallstatus();
  wled = await startFakeWled();
});
afterAll(async () => {
  await wled.close();
  await t.close();
});

describe('the call-status service\'s GET /metrics', () => {
  it('counts calls by outcome and light requests by result', async () => {
    const lit = await addUser(t, { name: 'Anna', attendance: 'anwesend', assignments: [{ deviceId: await addDevice(t, wled.hostname), segment: 0 }] });
    const dark = await addUser(t, { name: 'Ben', attendance: 'anwesend', assignments: [{ deviceId: await addDevice(t, await unreachableHostname()), segment: 0 }] });
    const away = await addUser(t, { name: 'Cem', attendance: 'abwesend', assignments: [{ deviceId: await addDevice(t, wled.hostname), segment: 1 }] });
    expect(await callEvent(t, 'GET', lit.extension, 'callstart')).toMatch(/^OK:/);
    await wled.waitForStates(1);
    expect(await callEvent(t, 'POST', dark.extension, 'callend')).toMatch(/^OK:/);
    expect(await callEvent(t, 'GET', away.extension, 'callstart')).toMatch(/^Ignored:/);
    expect(await callEvent(t, 'GET', '99999999', 'callstart')).toMatch(/^Unknown extension/);

    const res = await scrape();
    expect(res.statusCode).toBe(200);
    const text = res.body;
    expect(sample(text, 'callstatus_calls_total{event="callstart",outcome="ok"}')).toBe(1);
    expect(sample(text, 'callstatus_calls_total{event="callend",outcome="ok"}')).toBe(1);
    expect(sample(text, 'callstatus_calls_total{event="callstart",outcome="ignored"}')).toBe(1);
    expect(sample(text, 'callstatus_calls_total{event="callstart",outcome="unknown_extension"}')).toBe(1);
    expect(sample(text, 'callstatus_light_requests_total{result="ok"}')).toBe(1);
    expect(sample(text, 'callstatus_light_requests_total{result="unreachable"}') + sample(text, 'callstatus_light_requests_total{result="timeout"}')).toBe(1);
    expect(sample(text, 'callstatus_light_request_duration_seconds_count')).toBe(2);
    expect(text).not.toContain('Anna');
  });

  it.skipIf(!existsSync(PROMTOOL))('passes promtool check metrics', async () => {
    const { body } = await scrape();
    const out = await new Promise<string>((resolve) => {
      const child = execFile(PROMTOOL, ['check', 'metrics'], (_err, stdout, stderr) => resolve(`${stdout}${stderr}`));
      child.stdin!.end(body);
    });
    expect(out.trim()).toBe('');
  });

  it('refuses a request that came through a proxy', async () => {
    const res = await scrape({ 'x-forwarded-for': '203.0.113.9' });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'FORBIDDEN' });
  });
});
