// Maintenance window timing: one-off windows are half-open [starts_at, ends_at); recurring ones cover
// [cron match, + duration) in UTC, including occurrences that began before midnight or overlap.
import { describe, expect, it } from 'vitest';
import { coversAt, matcherAt, nextStart, type ScopedWindow, type WindowTiming } from './window-timing.js';

const t = (iso: string) => new Date(iso);
const oneOff = (starts: string, ends: string): WindowTiming => ({ starts_at: t(starts), ends_at: t(ends), cron: null, duration_minutes: null });
const recurring = (cron: string, minutes: number): WindowTiming => ({ starts_at: null, ends_at: null, cron, duration_minutes: minutes });

describe('a one-off window', () => {
  const w = oneOff('2026-07-01T10:00:00Z', '2026-07-01T12:00:00Z');

  it('covers its start and everything before its end, not the end itself', () => {
    expect(coversAt(w, t('2026-07-01T09:59:59.999Z'))).toBe(false);
    expect(coversAt(w, t('2026-07-01T10:00:00Z'))).toBe(true);
    expect(coversAt(w, t('2026-07-01T11:59:59.999Z'))).toBe(true);
    expect(coversAt(w, t('2026-07-01T12:00:00Z'))).toBe(false);
  });

  it('starts next at starts_at while that is ahead, then never', () => {
    expect(nextStart(w, t('2026-07-01T09:00:00Z'))).toEqual(t('2026-07-01T10:00:00Z'));
    expect(nextStart(w, t('2026-07-01T10:00:00Z'))).toBeNull();
    expect(nextStart(w, t('2026-07-02T00:00:00Z'))).toBeNull();
  });
});

describe('a recurring window', () => {
  // Every day at 02:00 UTC for 60 minutes.
  const nightly = recurring('0 2 * * *', 60);

  it('covers [match, match + duration) of every occurrence, in UTC', () => {
    expect(coversAt(nightly, t('2026-07-01T01:59:59.999Z'))).toBe(false);
    expect(coversAt(nightly, t('2026-07-01T02:00:00Z'))).toBe(true);
    expect(coversAt(nightly, t('2026-07-01T02:59:59.999Z'))).toBe(true);
    expect(coversAt(nightly, t('2026-07-01T03:00:00Z'))).toBe(false);
    expect(coversAt(nightly, t('2026-07-05T02:30:00Z'))).toBe(true);
  });

  it('covers the part after midnight of an occurrence that began the evening before', () => {
    const lateNight = recurring('0 23 * * 6', 180); // Saturdays 23:00 for 3 h
    // 2026-07-04 is a Saturday.
    expect(coversAt(lateNight, t('2026-07-04T22:59:00Z'))).toBe(false);
    expect(coversAt(lateNight, t('2026-07-05T01:30:00Z'))).toBe(true);
    expect(coversAt(lateNight, t('2026-07-05T02:00:00Z'))).toBe(false);
    // Not on other days: Sunday night is outside.
    expect(coversAt(lateNight, t('2026-07-05T23:30:00Z'))).toBe(false);
  });

  it('is always open when its occurrences overlap (every hour for 90 minutes)', () => {
    const overlapping = recurring('0 * * * *', 90);
    for (const minute of [0, 1, 29, 30, 59]) {
      expect(coversAt(overlapping, t(`2026-07-01T13:${String(minute).padStart(2, '0')}:00Z`))).toBe(true);
    }
  });

  it('a one-minute window covers only its minute', () => {
    const w = recurring('15 * * * *', 1);
    expect(coversAt(w, t('2026-07-01T10:15:00Z'))).toBe(true);
    expect(coversAt(w, t('2026-07-01T10:15:59.999Z'))).toBe(true);
    expect(coversAt(w, t('2026-07-01T10:16:00Z'))).toBe(false);
    expect(coversAt(w, t('2026-07-01T10:14:59.999Z'))).toBe(false);
  });

  it('starts next at the first match strictly after now, also while it is open', () => {
    expect(nextStart(nightly, t('2026-07-01T01:00:00Z'))).toEqual(t('2026-07-01T02:00:00Z'));
    expect(nextStart(nightly, t('2026-07-01T02:00:00Z'))).toEqual(t('2026-07-02T02:00:00Z'));
    expect(nextStart(nightly, t('2026-07-01T02:30:00Z'))).toEqual(t('2026-07-02T02:00:00Z'));
  });
});

it('a window with neither form, or a cron croner refuses, is never open and never starts', () => {
  for (const inert of [
    { starts_at: null, ends_at: null, cron: null, duration_minutes: null },
    recurring('not a cron', 60),
  ] satisfies WindowTiming[]) {
    expect(coversAt(inert, t('2026-07-01T00:00:00Z'))).toBe(false);
    expect(nextStart(inert, t('2026-07-01T00:00:00Z'))).toBeNull();
  }
});

describe('the matcher over all windows', () => {
  const at = t('2026-07-01T10:30:00Z');
  const open = oneOff('2026-07-01T10:00:00Z', '2026-07-01T11:00:00Z');
  const closed = oneOff('2026-07-01T12:00:00Z', '2026-07-01T13:00:00Z');
  const scoped = (id: number, timing: WindowTiming, customer_id: number | null, agent_id: string | null): ScopedWindow => ({ id, name: `w${id}`, customer_id, agent_id, ...timing });

  it('covers an agent by its own window, then its customer’s, then a global one', () => {
    const m = matcherAt([scoped(1, open, null, null), scoped(2, open, 7, null), scoped(3, open, null, 'agent-x'), scoped(4, open, 7, null)], at);
    expect(m.covers({ id: 'agent-x', customer_id: 7 })).toEqual({ id: 3, name: 'w3' });
    expect(m.covers({ id: 'agent-y', customer_id: 7 })).toEqual({ id: 2, name: 'w2' });
    expect(m.covers({ id: 'agent-z', customer_id: 8 })).toEqual({ id: 1, name: 'w1' });
    expect(m.covers({ id: 'agent-u', customer_id: null })).toEqual({ id: 1, name: 'w1' });
  });

  it('ignores windows that are not open at its time, and other agents’ and customers’ windows', () => {
    const m = matcherAt([scoped(1, closed, null, null), scoped(2, open, 7, null), scoped(3, open, null, 'agent-x'), scoped(4, recurring('0 10 * * *', 60), 9, null)], at);
    expect(m.covers({ id: 'agent-z', customer_id: 8 })).toBeNull();
    expect(m.covers({ id: 'agent-u', customer_id: null })).toBeNull();
    expect(m.covers({ id: 'agent-y', customer_id: 9 })).toEqual({ id: 4, name: 'w4' });
    expect(matcherAt([scoped(2, closed, 7, null)], at).covers({ id: 'agent-y', customer_id: 7 })).toBeNull();
  });
});
