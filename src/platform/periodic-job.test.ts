// The periodic job's loop on a fake clock: it runs, naps its interval, runs again; wake() cuts a nap
// short; stop() ends it even when called while a run is in progress (the clock never moves again in a
// shutdown, so a nap begun after stop() would wait forever).
import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import { createLogger } from './logger.js';
import { PeriodicJob } from './periodic-job.js';

const logger = createLogger({ level: 'silent' });
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('PeriodicJob', () => {
  it('runs at start, after each interval, and at once when woken', async () => {
    const clock = new FakeClock();
    let runs = 0;
    const job = new PeriodicJob('test', clock, 60_000, logger, async () => void runs++);
    job.start();
    await settle();
    expect(runs).toBe(1);
    await clock.advance(59_000);
    expect(runs).toBe(1);
    await clock.advance(1_000);
    expect(runs).toBe(2);
    job.wake();
    await settle();
    await settle();
    expect(runs).toBe(3);
    await job.stop();
    expect(clock.pendingSleepers).toBe(0);
  });

  it('stops when stop() is called while a run is in progress, without the clock moving', async () => {
    const clock = new FakeClock();
    let finish: () => void = () => undefined;
    const job = new PeriodicJob('test', clock, 60_000, logger, () => new Promise<void>((resolve) => (finish = resolve)));
    job.start();
    await settle();
    const stopped = job.stop();
    finish();
    await expect(Promise.race([stopped.then(() => 'stopped'), new Promise((resolve) => setTimeout(() => resolve('hung'), 1_000))])).resolves.toBe('stopped');
    expect(clock.pendingSleepers).toBe(0);
  });
});
