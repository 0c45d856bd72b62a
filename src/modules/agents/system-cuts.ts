// Where a heartbeat body is cut for storage (issue 62, point 2): the value of each large top-level member
// of the body's object is stored once per agent in agent_system_parts, by the hash of its text, and the
// agent row keeps only the text between those values (small, and what changes every beat: uptime,
// counters, load). Most of a body (a firewall's DHCP leases, routes and VPN peers, a Windows machine's
// software list) does not change from one beat to the next, and rewriting it, compressed into TOAST
// with a new chunk index entry, was three quarters of the WAL a heartbeat wrote (bench/wal.ts).
//
// The body comes back as the concatenation of its pieces and parts in order, so any cut gives the exact
// bytes back; the scanner below only decides where cutting saves something. The cuts are returned in
// characters (code points), the unit of PostgreSQL's substr on a UTF-8 database, which is where the
// text is sliced (the body travels once, as its own parameter).
import { createHash } from 'node:crypto';

/** A member's value shorter than this stays in the row: a part's own row and index entry cost more. */
export const PART_MIN_BYTES = 512;

export interface SystemCuts {
  /** The row's pieces: start (0-based) and length in characters; always one more than the parts. */
  pieceStarts: number[];
  pieceLengths: number[];
  /** The parts between the pieces: start, length and hash of each (hashes are distinct). */
  partStarts: number[];
  partLengths: number[];
  partHashes: string[];
  /** Short hashes of the members by position, for the agent's next body (CutOptions.previous); small, kept per agent. */
  memory: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * The byte ranges [start, end) of the values of `body`'s top-level members (a JSON object), in order;
 * none when it is not an object or cannot be scanned to its end. The body is well-formed JSON (the
 * route parsed it), so the scanner only tracks strings, escapes and nesting.
 */
export function memberValueRanges(body: Uint8Array): Array<[number, number]> {
  let i = 0;
  const skip = () => {
    while (isSpace(body[i])) i++;
  };
  skip();
  if (body[i] !== 0x7b) return [];
  i++;
  const ranges: Array<[number, number]> = [];
  for (;;) {
    skip();
    if (body[i] === 0x7d) return ranges;
    if (body[i] !== QUOTE) return [];
    i = endOfString(body, i);
    skip();
    if (body[i] !== 0x3a) return [];
    i++;
    skip();
    const start = i;
    i = endOfValue(body, i);
    if (i <= start) return [];
    ranges.push([start, i]);
    skip();
    if (body[i] === 0x2c) i++;
    else if (body[i] === 0x7d) return ranges;
    else return [];
  }
}

/** The index just past the string that opens at `i` (its closing quote), or the body's length. */
function endOfString(body: Uint8Array, i: number): number {
  for (i++; i < body.length; i++) {
    if (body[i] === BACKSLASH) i++;
    else if (body[i] === QUOTE) return i + 1;
  }
  return body.length;
}

/** The index just past the value that starts at `i`: a string, an array or object (nesting counted), or a scalar. */
function endOfValue(body: Uint8Array, i: number): number {
  const first = body[i];
  if (first === QUOTE) return endOfString(body, i);
  if (first === 0x5b || first === 0x7b) {
    let depth = 0;
    while (i < body.length) {
      const b = body[i];
      if (b === QUOTE) {
        i = endOfString(body, i);
        continue;
      }
      if (b === 0x5b || b === 0x7b) depth++;
      else if (b === 0x5d || b === 0x7d) depth--;
      i++;
      if (depth === 0) return i;
    }
    return i;
  }
  while (i < body.length && body[i] !== 0x2c && body[i] !== 0x7d && !isSpace(body[i])) i++;
  return i;
}

export interface CutOptions {
  /** Values at least this long are always parts (default PART_MIN_BYTES). */
  minBytes?: number;
  /** Shorter values at least this long are parts when unchanged since the agent's previous body (default STEADY_MIN_BYTES). */
  steadyMinBytes?: number;
  /** `memory` of the agent's previous body's cuts, when this server cut one. */
  previous?: string;
}

/** A smaller value is a part only when it did not change since the last beat (a part's own row costs about this much). */
export const STEADY_MIN_BYTES = 96;
/** Characters of a member's hash kept in `memory`: enough to tell a changed value from the same one. */
const REMEMBERED = 8;
const NOTHING = '-'.repeat(REMEMBERED);

/**
 * Where to cut `body`. A value of `minBytes` or more is a part. A smaller one down to `steadyMinBytes`
 * (a hardware or OS description, a short service list) is a part when it is the same as in the agent's
 * previous body, the member at the same position: what changes every beat (CPU, memory, disks) stays
 * in the row, where a changed value costs only its bytes, not a part's row, index entry and deletion.
 */
export function systemCuts(body: Uint8Array, options: CutOptions = {}): SystemCuts {
  const minBytes = options.minBytes ?? PART_MIN_BYTES;
  const steady = Math.min(minBytes, options.steadyMinBytes ?? STEADY_MIN_BYTES);
  const cuts: SystemCuts = { pieceStarts: [], pieceLengths: [], partStarts: [], partLengths: [], partHashes: [], memory: '' };
  const seen = new Set<string>();
  let atChar = 0;
  let counted = 0;
  let chars = 0;
  // Characters before byte `to`, counting on from the last call (the cuts come in order).
  const charsTo = (to: number) => {
    for (; counted < to; counted++) if ((body[counted]! & 0xc0) !== 0x80) chars++;
    return chars;
  };
  const ranges = memberValueRanges(body);
  for (let i = 0; i < ranges.length; i++) {
    const [start, end] = ranges[i]!;
    if (end - start < steady) {
      cuts.memory += NOTHING;
      continue;
    }
    const hash = createHash('sha256').update(body.subarray(start, end)).digest('base64url').slice(0, 22);
    const short = hash.slice(0, REMEMBERED);
    const unchanged = options.previous?.slice(i * REMEMBERED, (i + 1) * REMEMBERED) === short;
    cuts.memory += short;
    // The same text twice in one body (two equal lists) is kept in the row the second time.
    if ((end - start < minBytes && !unchanged) || seen.has(hash)) continue;
    seen.add(hash);
    const startChar = charsTo(start);
    const endChar = charsTo(end);
    cuts.pieceStarts.push(atChar);
    cuts.pieceLengths.push(startChar - atChar);
    cuts.partStarts.push(startChar);
    cuts.partLengths.push(endChar - startChar);
    cuts.partHashes.push(hash);
    atChar = endChar;
  }
  cuts.pieceStarts.push(atChar);
  cuts.pieceLengths.push(charsTo(body.length) - atChar);
  return cuts;
}

/** The stored body back: pieces and parts alternating, a piece first and last. */
export function joinSystem(pieces: readonly string[], parts: readonly string[]): string {
  let text = pieces[0] ?? '';
  for (let i = 0; i < parts.length; i++) text += parts[i]! + (pieces[i + 1] ?? '');
  return text;
}
