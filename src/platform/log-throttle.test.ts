import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { LogThrottle } from './log-throttle.js';
import { createLogger } from './logger.js';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  });
  return { logger, lines };
}

describe('LogThrottle', () => {
  it('logs the first of a kind at once, then one summary per window with the count of the rest', async () => {
    const { logger, lines } = capture();
    const logs = new LogThrottle(logger, { windowMs: 50 });
    for (let i = 0; i < 1000; i++) logs.warn('garbage:a', { agentId: 'a', i }, 'dropped a frame');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'dropped a frame', agentId: 'a', i: 0 });
    await vi.waitFor(() => expect(lines).toHaveLength(2));
    expect(lines[1]).toMatchObject({ msg: 'dropped a frame (999 more like this in 0 s)', repeated: 999, i: 999 });

    // A quiet window ends the kind: the next one is logged at once again.
    await new Promise((resolve) => setTimeout(resolve, 150));
    logs.warn('garbage:a', { agentId: 'a' }, 'dropped a frame');
    expect(lines).toHaveLength(3);
  });

  it('keeps kinds apart, bounds how many it tracks, and writes pending summaries on flush', () => {
    const { logger, lines } = capture();
    const logs = new LogThrottle(logger, { windowMs: 60_000, maxKinds: 2 });
    logs.warn('a', {}, 'kind a');
    logs.warn('b', {}, 'kind b');
    logs.warn('c', {}, 'kind c'); // a third kind shares the overflow entry: logged once
    logs.warn('d', {}, 'kind d');
    logs.warn('a', {}, 'kind a');
    expect(lines.map((l) => l.msg)).toEqual(['kind a', 'kind b', 'kind c']);
    logs.flush();
    expect(lines.map((l) => l.msg)).toEqual(['kind a', 'kind b', 'kind c', 'kind a (1 more like this in 60 s)', 'kind c (1 more like this in 60 s)']);
  });

  it('writes the first line of a window to the logger it is given (a request\'s), the summary to its own', () => {
    const own = capture();
    const request = capture();
    const logs = new LogThrottle(own.logger, { windowMs: 60_000 });
    logs.warn('db', { error: 'refused' }, 'database unavailable', request.logger);
    logs.warn('db', { error: 'refused' }, 'database unavailable', request.logger);
    logs.flush();
    expect(request.lines.map((l) => l.msg)).toEqual(['database unavailable']);
    expect(own.lines.map((l) => l.msg)).toEqual(['database unavailable (1 more like this in 60 s)']);
  });
});
