import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OutageLog } from './outage-log.js';

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

function recorder() {
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  return { lines, warn: (fields: object, message: string) => void lines.push({ fields: fields as Record<string, unknown>, message }) };
}

describe('OutageLog', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('logs the first failure at once and sums up the rest in one line per interval', () => {
    const log = recorder();
    const outage = new OutageLog('database unavailable', log, 10_000);
    for (let i = 0; i < 500; i++) outage.report(new Error('wrapped', { cause: refused }));
    expect(log.lines).toEqual([{ fields: { error: { code: 'ECONNREFUSED', message: refused.message } }, message: 'database unavailable' }]);

    vi.advanceTimersByTime(10_000);
    expect(log.lines).toHaveLength(2);
    expect(log.lines[1]).toEqual({
      fields: { error: { code: 'ECONNREFUSED', message: refused.message }, count: 499 },
      message: 'database unavailable (499 more in 10 s)',
    });

    // Still failing: the next interval is summed up too, never line by line.
    for (let i = 0; i < 30; i++) outage.report(refused);
    vi.advanceTimersByTime(10_000);
    expect(log.lines.map((l) => l.fields.count)).toEqual([undefined, 499, 30]);
  });

  it('logs the first failure of a later outage at once, to the logger it is given', () => {
    const base = recorder();
    const request = recorder();
    const outage = new OutageLog('database unavailable', base, 10_000);
    outage.report(refused);
    vi.advanceTimersByTime(60_000);
    outage.report(refused, request);
    expect(base.lines).toHaveLength(1);
    expect(request.lines).toHaveLength(1);
  });
});
