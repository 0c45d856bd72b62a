// The validators of winget-autoupdate's list files: Last-Modified and an ETag, and whether a request's
// conditions make the answer 304. Pure, so the second-resolution edge cases are tested without waiting.
//
// HTTP dates have whole seconds and rules can change several times a second. Last-Modified is the
// customer's latest rule change rounded *up* to its second, but never later than one second before the
// response's Date (RFC 9110 forbids a Last-Modified after Date):
// - rounding up: WAU downloads again only when Last-Modified (to the second) is later than its own copy's
//   write time. A change made in the same second as WAU's download still ends up later than that copy;
//   rounded down it would equal it and the change would never reach the PC;
// - the cap at Date - 1 s: a change made (or still committing) in the current second cannot be hidden
//   behind a Last-Modified a client already holds: whoever read the list in second S got at most S - 1,
//   and any change after that read shows as S or later from the next second on.
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

export function listValidators(body: string, changedAt: Date, now: Date): ListValidators {
  const date = Math.floor(now.getTime() / SECOND) * SECOND;
  const changedSecond = Math.ceil(changedAt.getTime() / SECOND) * SECOND;
  return {
    date: new Date(date),
    lastModified: new Date(Math.min(changedSecond, date - SECOND)),
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
