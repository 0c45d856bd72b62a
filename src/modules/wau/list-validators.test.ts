// The list files' validators at the edges of a second: Last-Modified is the first whole second after
// the change, the same at every later time, never after Date once the hold is over, and later than any
// value served before a later change.
import { describe, expect, it } from 'vitest';
import { holdMs, isNotModified, lastModifiedOf, listValidators } from './list-validators.js';

const at = (iso: string) => new Date(iso);

describe('listValidators', () => {
  it('is the second after the change, whatever the time of the answer', () => {
    for (const now of ['2030-01-01T10:00:01Z', '2030-01-01T10:00:01.999Z', '2030-01-01T10:00:02.500Z', '2030-01-01T11:00:00Z']) {
      expect(listValidators('', at('2030-01-01T10:00:00.250Z'), at(now)).lastModified, now).toEqual(at('2030-01-01T10:00:01Z'));
    }
    // A change on the full second is after that second's start too: a copy read in it may predate it.
    expect(lastModifiedOf(at('2030-01-01T10:00:00Z'))).toEqual(at('2030-01-01T10:00:01Z'));
    expect(listValidators('', at('2030-01-01T10:00:00.250Z'), at('2030-01-01T10:05:00.900Z')).date).toEqual(at('2030-01-01T10:05:00Z'));
  });

  it('holds an answer asked for in the change\'s own second until it is over, and none other', () => {
    expect(holdMs(at('2030-01-01T10:00:00.250Z'), at('2030-01-01T10:00:00.400Z'))).toBe(600);
    expect(holdMs(at('2030-01-01T10:00:00.250Z'), at('2030-01-01T10:00:01Z'))).toBe(0);
    expect(holdMs(at('2030-01-01T10:00:00.250Z'), at('2030-01-01T10:00:07Z'))).toBe(0);
    // Recorded ahead of this clock (set back since): not waited for; capped at Date instead.
    expect(holdMs(at('2030-01-01T10:07:00Z'), at('2030-01-01T10:05:00.500Z'))).toBe(0);
    expect(listValidators('', at('2030-01-01T10:07:00Z'), at('2030-01-01T10:05:00.500Z')).lastModified).toEqual(at('2030-01-01T10:05:00Z'));
  });

  it('gives a change after any read a Last-Modified later than that read\'s Date', () => {
    // Read at every 100 ms of a second (after its hold), a change 1 ms after each read.
    for (let readMs = 0; readMs < 1000; readMs += 100) {
      const read = new Date(Date.UTC(2030, 0, 1, 10, 0, 0, readMs));
      const held = listValidators('old', at('2030-01-01T09:59:58.500Z'), read);
      const current = listValidators('new', new Date(read.getTime() + 1), new Date(read.getTime() + 1000 + holdMs(new Date(read.getTime() + 1), read)));
      expect(current.lastModified.getTime(), `read at .${readMs}`).toBeGreaterThan(held.date.getTime());
      expect(isNotModified(current, { ifModifiedSince: held.lastModified })).toBe(false);
      expect(isNotModified(current, { ifModifiedSince: held.date })).toBe(false);
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
