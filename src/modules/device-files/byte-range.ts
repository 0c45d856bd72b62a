// The one Range form a download honours (RFC 9110 §14): a single `bytes=N-` or `bytes=N-M`. Suffix
// ranges (`bytes=-N`) and several ranges are answered whole (200), as the RFC allows; a first byte past
// the end is 416.
import { AppError } from '../../platform/errors.js';

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/** null: send the whole file; a range: send that; throws 416 RANGE_NOT_SATISFIABLE. */
export function parseRange(header: string | undefined, size: number): ByteRange | null {
  if (!header) return null;
  const match = /^bytes=(\d{1,16})-(\d{0,16})$/.exec(header.trim());
  if (!match) return null;
  const start = Number(match[1]);
  const end = match[2] ? Math.min(Number(match[2]), size - 1) : size - 1;
  if (start >= size || (match[2] && Number(match[2]) < start)) {
    throw new AppError('RANGE_NOT_SATISFIABLE', `The range ${header.trim()} is outside the file (${size} bytes)`, { headers: { 'content-range': `bytes */${size}` } });
  }
  return { start, end };
}

/** Content-Disposition for a download (RFC 6266): an ASCII fallback and the UTF-8 name. */
export function attachment(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_') || 'download';
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
