import { describe, expect, it } from 'vitest';
import { leaked, PAIR_POLICY, waitAfter, withFailure, withRefund } from './login-throttle.js';
import type { CounterState } from './login-throttle.repo.js';

const start = new Date('2026-11-30T09:00:00Z');
const at = (minutes: number) => new Date(start.getTime() + minutes * 60_000);
const empty: CounterState = { failures: 0, leak_from: start, blocked_until: null, succeeded_at: null, forgotten_at: start };

function failTimes(state: CounterState, times: number, now: Date): CounterState {
  for (let i = 0; i < times; i++) state = withFailure(state, PAIR_POLICY, now);
  return state;
}

describe('login counters', () => {
  it('wait 1, 2, 4 … minutes after the limit, never more than an hour', () => {
    expect([9, 10, 11, 12, 13, 15, 16, 17, 40].map((n) => waitAfter(n, PAIR_POLICY) / 60_000)).toEqual([0, 1, 2, 4, 8, 32, 60, 60, 60]);
  });

  it('set the wait with the failure that reaches the limit', () => {
    expect(failTimes(empty, 9, start).blocked_until).toBeNull();
    expect(failTimes(empty, 10, start).blocked_until).toEqual(at(1));
  });

  it('forget one failure per interval, keeping the part of an interval already run', () => {
    const ten = failTimes(empty, 10, start);
    expect(leaked(ten, PAIR_POLICY, at(59)).failures).toBe(10);
    expect(leaked(ten, PAIR_POLICY, at(150))).toEqual({ failures: 8, leakFrom: at(120) });
    expect(leaked(ten, PAIR_POLICY, at(600))).toEqual({ failures: 0, leakFrom: at(600) });
    expect(ten.forgotten_at).toEqual(at(600));
  });

  it('give an attempt back, and with it the wait it set', () => {
    const ten = failTimes(empty, 10, start);
    expect(withRefund(ten, PAIR_POLICY, start)).toMatchObject({ failures: 9, blocked_until: null });
    const eleven = withFailure(ten, PAIR_POLICY, at(1));
    expect(withRefund(eleven, PAIR_POLICY, at(1))).toMatchObject({ failures: 10, blocked_until: null });
  });
});
