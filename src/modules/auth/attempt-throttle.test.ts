import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../platform/clock.js';
import { addressGroup, ApiKeyThrottle, type GuessingSummary } from './attempt-throttle.js';

const policy = { maxFailures: 30, windowMs: 300_000 };

/** An attempt whose key turns out wrong. */
const wrongKey = (throttle: ApiKeyThrottle, address: string) => throttle.begin(address).failed();

describe('ApiKeyThrottle', () => {
  it('lets an address fail 30 times, then refuses its wrong keys with Retry-After until its window has passed', async () => {
    const clock = new FakeClock('2026-11-25T10:00:00Z');
    const throttle = new ApiKeyThrottle(clock, policy);
    const outcomes = Array.from({ length: 30 }, () => wrongKey(throttle, '203.0.113.7'));
    expect(outcomes.every((o) => o.error === null)).toBe(true);
    expect(outcomes.slice(0, 29).every((o) => o.summary === null)).toBe(true);
    expect(outcomes[29]!.summary).toEqual({ address: '203.0.113.7', attempts: 30, periodSeconds: 1, throttledUntil: new Date('2026-11-25T10:05:00Z') });

    await clock.advance(60_000);
    const refused = wrongKey(throttle, '203.0.113.7');
    expect(refused.error).toMatchObject({ code: 'TOO_MANY_ATTEMPTS', status: 429, headers: { 'retry-after': '240' } });
    expect(refused.summary).toBeNull();
    expect(wrongKey(throttle, '203.0.113.8').error).toBeNull();

    await clock.advance(240_000);
    expect(wrongKey(throttle, '203.0.113.7').error).toBeNull();
  });

  it('takes attempts before their keys are checked: of 50 at once, 30 are counted and the other 20 refused', () => {
    const throttle = new ApiKeyThrottle(new FakeClock(), policy);
    const inFlight = Array.from({ length: 50 }, () => throttle.begin('192.0.2.1'));
    const outcomes = inFlight.map((attempt) => attempt.failed());
    expect(outcomes.filter((o) => o.error === null)).toHaveLength(30);
    expect(outcomes.filter((o) => o.error?.code === 'TOO_MANY_ATTEMPTS')).toHaveLength(20);
  });

  it('gives a valid key its attempt back, and lets it clear nothing', () => {
    const throttle = new ApiKeyThrottle(new FakeClock(), policy);
    for (let i = 0; i < 29; i++) wrongKey(throttle, '192.0.2.2');
    for (let i = 0; i < 5; i++) throttle.begin('192.0.2.2').passed();
    expect(wrongKey(throttle, '192.0.2.2').error).toBeNull();
    throttle.begin('192.0.2.2').passed();
    expect(wrongKey(throttle, '192.0.2.2').error).toMatchObject({ code: 'TOO_MANY_ATTEMPTS' });
  });

  it('keeps no address that only presents valid keys', () => {
    const throttle = new ApiKeyThrottle(new FakeClock(), policy);
    for (let i = 0; i < 1000; i++) throttle.begin(`10.1.${i % 250}.${i}`).passed();
    expect(throttle.trackedAddresses).toBe(0);
  });

  it('never throttles a client failing once a minute', async () => {
    const clock = new FakeClock();
    const throttle = new ApiKeyThrottle(clock, policy);
    for (let minute = 0; minute < 24 * 60; minute++) {
      expect(wrongKey(throttle, '198.51.100.1')).toEqual({ error: null, summary: null });
      await clock.advance(60_000);
    }
  });

  it('reports a guesser that goes on for an hour once per window, counting every attempt once', async () => {
    const clock = new FakeClock();
    const throttle = new ApiKeyThrottle(clock, policy);
    const summaries: GuessingSummary[] = [];
    let sent = 0;
    // 20 attempts a second for an hour: each is refused, or checked and failed.
    for (let tick = 0; tick < 3600 * 20; tick++) {
      sent++;
      const { summary } = wrongKey(throttle, '192.0.2.9');
      if (summary) summaries.push(summary);
      await clock.advance(50);
    }
    expect(summaries.length).toBeGreaterThanOrEqual(11);
    expect(summaries.length).toBeLessThanOrEqual(13);
    expect(summaries.slice(1).every((s) => s.periodSeconds >= 300 && s.attempts > 5_000)).toBe(true);
    const reported = summaries.reduce((n, s) => n + s.attempts, 0);
    expect(reported).toBeLessThanOrEqual(sent);
    expect(reported).toBeGreaterThan(sent - 300 * 20);
  });

  it('tracks at most its capacity of addresses, forgetting the oldest first', () => {
    const throttle = new ApiKeyThrottle(new FakeClock(), policy, 100);
    for (let i = 0; i < 30; i++) wrongKey(throttle, '10.0.0.1');
    for (let i = 0; i < 10_000; i++) wrongKey(throttle, `192.0.2.${i % 250}-${i}`);
    expect(throttle.trackedAddresses).toBe(100);
    expect(wrongKey(throttle, '10.0.0.1').error).toBeNull();
  });
});

describe('addressGroup', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
  ])('%s counts as %s', (ip, group) => {
    expect(addressGroup(ip)).toBe(group);
  });
});
