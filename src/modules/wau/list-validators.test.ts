// The list files' validators at the edges of a second: Last-Modified never after Date, and never equal
// to a value served before a later change.
import { describe, expect, it } from 'vitest';
import { isNotModified, listValidators } from './list-validators.js';

const at = (iso: string) => new Date(iso);

describe('listValidators', () => {
  it('rounds the change up to its second, but stays at least one second before Date', () => {
    expect(listValidators('', at('2030-01-01T10:00:00.250Z'), at('2030-01-01T10:05:00.900Z'))).toMatchObject({
      date: at('2030-01-01T10:05:00Z'),
      lastModified: at('2030-01-01T10:00:01Z'),
    });
    expect(listValidators('', at('2030-01-01T10:00:00Z'), at('2030-01-01T10:05:00Z')).lastModified).toEqual(at('2030-01-01T10:00:00Z'));
    // Changed in this second, or recorded ahead of this clock: Date - 1 s.
    for (const changed of ['2030-01-01T10:05:00.100Z', '2030-01-01T10:05:00.999Z', '2030-01-01T10:07:00Z']) {
      expect(listValidators('', at(changed), at('2030-01-01T10:05:00.999Z')).lastModified, changed).toEqual(at('2030-01-01T10:04:59Z'));
    }
  });

  it('never gives a later change the Last-Modified of a copy read before it, once the read second is over', () => {
    // Read at every 100 ms of second S, a change 1 ms after each read, checked from the next second on.
    for (let readMs = 0; readMs < 1000; readMs += 100) {
      const read = new Date(Date.UTC(2030, 0, 1, 10, 0, 0, readMs));
      const held = listValidators('old', at('2030-01-01T09:59:59.500Z'), read).lastModified;
      const change = new Date(read.getTime() + 1);
      for (const later of [1000, 1500, 60_000]) {
        const now = new Date(Date.UTC(2030, 0, 1, 10, 0, 0) + later);
        const current = listValidators('new', change, now);
        expect(current.lastModified.getTime(), `read at .${readMs}, checked +${later} ms`).toBeGreaterThan(held.getTime());
        expect(isNotModified(current, { ifModifiedSince: held })).toBe(false);
      }
    }
  });

  it('has an ETag that follows the body', () => {
    const a = listValidators('A.B\n', at('2030-01-01T10:00:00Z'), at('2030-01-01T11:00:00Z'));
    expect(a.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(listValidators('A.B\n', at('2029-01-01T10:00:00Z'), at('2030-01-01T11:00:00Z')).etag).toBe(a.etag);
    expect(listValidators('A.C\n', at('2030-01-01T10:00:00Z'), at('2030-01-01T11:00:00Z')).etag).not.toBe(a.etag);
  });
});

describe('isNotModified', () => {
  const v = listValidators('A.B\n', at('2030-01-01T10:00:00Z'), at('2030-01-01T11:00:00Z'));
  it('compares If-None-Match weakly and lets it decide over If-Modified-Since', () => {
    expect(isNotModified(v, { ifNoneMatch: v.etag })).toBe(true);
    expect(isNotModified(v, { ifNoneMatch: `"x", W/${v.etag}` })).toBe(true);
    expect(isNotModified(v, { ifNoneMatch: '*' })).toBe(true);
    expect(isNotModified(v, { ifNoneMatch: '"x"', ifModifiedSince: at('2031-01-01T00:00:00Z') })).toBe(false);
  });
  it('takes If-Modified-Since at or after Last-Modified as current', () => {
    expect(isNotModified(v, { ifModifiedSince: v.lastModified })).toBe(true);
    expect(isNotModified(v, { ifModifiedSince: new Date(v.lastModified.getTime() - 1000) })).toBe(false);
    expect(isNotModified(v, {})).toBe(false);
  });
});
