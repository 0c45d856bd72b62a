import { describe, expect, it } from 'vitest';
import { FakeClock, systemClock } from './clock.js';

describe('FakeClock', () => {
  it('only moves when advanced', async () => {
    const clock = new FakeClock('2026-03-01T12:00:00Z');
    expect(clock.now().toISOString()).toBe('2026-03-01T12:00:00.000Z');
    await clock.advance(90_000);
    expect(clock.now().toISOString()).toBe('2026-03-01T12:01:30.000Z');
  });

  it('wakes sleepers in time order, including ones that sleep again inside the window', async () => {
    const clock = new FakeClock();
    const woke: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(60_000);
        woke.push(clock.now().getTime());
      }
    })();
    await clock.advance(59_999);
    expect(woke).toHaveLength(0);
    await clock.advance(120_001);
    await loop;
    const start = new Date('2026-01-01T00:00:00Z').getTime();
    expect(woke).toEqual([start + 60_000, start + 120_000, start + 180_000]);
  });

  it('rejects a sleep when its signal aborts', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(1_000, controller.signal);
    controller.abort(new Error('stopped'));
    await expect(sleeping).rejects.toThrow('stopped');
    expect(clock.pendingSleepers).toBe(0);
  });

  it('fires a timer when due and never once it is cancelled', async () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    clock.timer(1_000, () => fired.push('kept'));
    const cancel = clock.timer(500, () => fired.push('cancelled'));
    expect(clock.pendingSleepers).toBe(2);
    cancel();
    await clock.advance(999);
    expect(fired).toEqual([]);
    await clock.advance(1);
    expect(fired).toEqual(['kept']);
    expect(clock.pendingSleepers).toBe(0);
  });
});

describe('systemClock.timer', () => {
  it('fires after its time unless cancelled', async () => {
    const fired: string[] = [];
    systemClock.timer(5, () => fired.push('kept'));
    systemClock.timer(5, () => fired.push('cancelled'))();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(fired).toEqual(['kept']);
  });
});
