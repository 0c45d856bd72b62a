import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../platform/clock.js';
import { ConnectRate } from './connect-rate.js';

describe('ConnectRate', () => {
  it('allows a burst, then one per refill period, per agent and credential', () => {
    const clock = new FakeClock();
    const rate = new ConnectRate(clock, { burst: 3, refillMs: 10_000 });
    expect([rate.take('key:1', 'a'), rate.take('key:1', 'a'), rate.take('key:1', 'a')]).toEqual([0, 0, 0]);
    expect(rate.take('key:1', 'a')).toBe(10);
    expect(rate.take('key:2', 'a')).toBe(0);
    expect(rate.take('key:1', 'b')).toBe(0);
    void clock.advance(4_000);
    expect(rate.take('key:1', 'a')).toBe(6);
    void clock.advance(6_000);
    expect(rate.take('key:1', 'a')).toBe(0);
    expect(rate.take('key:1', 'a')).toBe(10);
  });

  it('forgets the least recently used buckets beyond its bound', () => {
    const clock = new FakeClock();
    const rate = new ConnectRate(clock, { burst: 1, refillMs: 60_000, maxBuckets: 2 });
    expect(rate.take('k', 'a')).toBe(0);
    expect(rate.take('k', 'a')).toBe(60);
    rate.take('k', 'b');
    rate.take('k', 'c'); // 'a' is the least recently used and goes
    expect(rate.take('k', 'a')).toBe(0);
  });
});
