// A clock that runs in real time but can be set back: end-to-end tests use it to give an agent hours of
// metric history in a few seconds (heartbeats "sent" in the past), then set it to now for the browser,
// which asks for ranges by its own real time.
import { systemClock, type Clock } from '../../src/platform/clock.js';

export class ShiftedClock implements Clock {
  offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }

  timer(ms: number, fire: () => void): () => void {
    return systemClock.timer(ms, fire);
  }
}
