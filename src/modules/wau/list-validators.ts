// The validators of winget-autoupdate's list files: Last-Modified and an ETag, and whether a request's
// conditions make the answer 304. Pure, so the second-resolution edge cases are tested without waiting.
//
// HTTP dates have whole seconds and rules can change several times a second. Last-Modified is the first
// whole second after the customer's latest rule change, as stored: the same in every answer until the
// next change, which always moves it forward (issue 57: a value capped at Date - 1 s moved within 2 s of
// a change while the ETag stayed, and WAU downloaded the unchanged list again).
// - after the change's second, not at it: WAU downloads again only when Last-Modified (to the second) is
//   later than its own copy's write time, and a change made in the same second as WAU's download must
//   still end up later than that copy;
// - never after Date (RFC 9110): the service holds an answer asked for within the change's own second
//   until that second is over (`holdMs`), so Last-Modified is never capped and never moves. A copy served
//   at Date D was read at D or later, and any change after that read shows as D + 1 or later.
// The ETag (a hash of the body) is exact; caches that send If-None-Match never miss a change.
import { createHash } from 'node:crypto';

export interface ListValidators {
  /** The response's Date, whole seconds. */
  date: Date;
  lastModified: Date;
  etag: string;
}

export interface ListConditions {
  ifModifiedSince?: Date | undefined;
  /** The raw If-None-Match header; when present, If-Modified-Since is ignored (RFC 9110 §13.2.2). */
  ifNoneMatch?: string | undefined;
}

const SECOND = 1000;

/** Last-Modified of a list whose latest change was at `changedAt`: the next whole second. */
export function lastModifiedOf(changedAt: Date): Date {
  return new Date((Math.floor(changedAt.getTime() / SECOND) + 1) * SECOND);
}

/**
 * How long to hold an answer at `now` so that its Date reaches Last-Modified: up to a second when the
 * list changed in the current second, else 0. A change recorded further ahead (the clock was set back)
 * is not waited for; its Last-Modified is capped at Date instead.
 */
export function holdMs(changedAt: Date, now: Date): number {
  const wait = lastModifiedOf(changedAt).getTime() - now.getTime();
  return wait > 0 && wait <= SECOND ? wait : 0;
}

export function listValidators(body: string, changedAt: Date, now: Date): ListValidators {
  const date = Math.floor(now.getTime() / SECOND) * SECOND;
  return {
    date: new Date(date),
    lastModified: new Date(Math.min(lastModifiedOf(changedAt).getTime(), date)),
    etag: `"${createHash('sha256').update(body, 'utf8').digest('base64url').slice(0, 27)}"`,
  };
}

/** True when the client's copy is current, so the answer is 304 without a body. */
export function isNotModified(validators: ListValidators, conditions: ListConditions): boolean {
  if (conditions.ifNoneMatch !== undefined) return etagListMatches(conditions.ifNoneMatch, validators.etag);
  return conditions.ifModifiedSince !== undefined && conditions.ifModifiedSince.getTime() >= validators.lastModified.getTime();
}

/** If-None-Match: `*`, or a comma-separated list of entity tags compared weakly (a `W/` prefix is ignored). */
function etagListMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** An HTTP date, or undefined for none or one that does not parse (then the full list is sent). */
export function parseHttpDate(value: string | undefined): Date | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}
