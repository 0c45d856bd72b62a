import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';

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
});
