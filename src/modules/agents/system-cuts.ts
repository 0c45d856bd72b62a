// Where a heartbeat body is cut for storage (issue 62, point 2): each large top-level member of the
// body's object (from its name to the next member's) is stored once per agent in agent_system_parts, by
// the hash of its text, and the agent row keeps only the text between those members (small, and what changes every beat: uptime,
// counters, load). Most of a body (a firewall's DHCP leases, routes and VPN peers, a Windows machine's
// software list) does not change from one beat to the next, and rewriting it, compressed into TOAST
// with a new chunk index entry, was three quarters of the WAL a heartbeat wrote (bench/wal.ts).
//
// The body comes back as the concatenation of its pieces and parts in order, so any cut gives the exact
// bytes back; the search below only decides where cutting saves something. The cuts are byte offsets:
// the body travels once, as bytea, and PostgreSQL slices it with substring() on bytea, which costs the
// slice's length. (The first version cut in characters with substr() on text: on a UTF-8 database that
// counts characters from the start of the 30 KB text on every call, about 55 µs a slice, 25 slices a
// heartbeat, and made B1 six times dearer.) Every cut is at a quote, so each slice is valid UTF-8 on
// its own.
import { hash } from 'node:crypto';

/** A member shorter than this stays in the row: a part's own row and index entry cost more. */
export const PART_MIN_BYTES = 512;

export interface SystemCuts {
  /** The row's pieces: start (0-based) and length in bytes; always one more than the parts. */
  pieceStarts: number[];
  pieceLengths: number[];
  /** The parts between the pieces: start, length and hash of each (hashes are distinct). */
  partStarts: number[];
  partLengths: number[];
  partHashes: string[];
  /** Short hashes of the members by position, for the agent's next body (CutOptions.previous); small, kept per agent. */
  memory: string;
}

/**
 * Where each of `keys` (the parsed body's top-level member names, in order) begins in `body`: the offset
 * of its name's opening quote, each found after the one before. The search is native (Buffer.indexOf,
 * 16 µs for B1's 30 KB body, where a JavaScript scanner that tracked strings and nesting byte by byte cost
 * 45 µs a heartbeat). It can be fooled, by a name that also occurs inside an earlier value or one
 * spelled with escapes, and then only cuts elsewhere: any cut gives the exact bytes back, and a cut at a
 * quote is always between two UTF-8 characters. The search stops at the first name it does not find.
 */
export function memberStarts(body: Buffer, keys: readonly string[]): number[] {
  const starts: number[] = [];
  let from = 0;
  for (const key of keys) {
    const at = body.indexOf(JSON.stringify(key), from);
    if (at < 0) break;
    starts.push(at);
    from = at + 1;
  }
  return starts;
}

export interface CutOptions {
  /** Members at least this long are always parts (default PART_MIN_BYTES). */
  minBytes?: number;
  /** Shorter members at least this long are parts when unchanged since the agent's previous body (default STEADY_MIN_BYTES). */
  steadyMinBytes?: number;
  /** `memory` of the agent's previous body's cuts, when this server cut one. */
  previous?: string;
}

/** A smaller member is a part only when it did not change since the last beat (a part's own row costs about this much). */
export const STEADY_MIN_BYTES = 96;
/** Characters of a member's hash kept in `memory`: enough to tell a changed value from the same one. */
const REMEMBERED = 8;
const NOTHING = '-'.repeat(REMEMBERED);
/**
 * Members cut at most: the rest of a body after the last of them is one member. The fixtures have 13 to
 * 21; a hostile body of 4 MiB of tiny members would otherwise make thousands of parts a beat (a row,
 * an index entry and a deletion each) and a memory of 8 bytes per member per agent.
 */
export const MAX_MEMBERS = 64;

/**
 * Where to cut `body`, whose parsed top-level member names are `keys`. A member is cut from its name to
 * the next member's name (its value and what separates them included). One of `minBytes` or more is a
 * part. A smaller one down to `steadyMinBytes` (a hardware or OS description, a short service list) is
 * a part when it is the same as in the agent's previous body, the member at the same position: what
 * changes every beat (CPU, memory, disks) stays in the row, where a changed value costs only its bytes,
 * not a part's row, index entry and deletion.
 */
export function systemCuts(body: Buffer, keys: readonly string[], options: CutOptions = {}): SystemCuts {
  const minBytes = options.minBytes ?? PART_MIN_BYTES;
  const steady = Math.min(minBytes, options.steadyMinBytes ?? STEADY_MIN_BYTES);
  const cuts: SystemCuts = { pieceStarts: [], pieceLengths: [], partStarts: [], partLengths: [], partHashes: [], memory: '' };
  const seen = new Set<string>();
  let at = 0;
  const starts = memberStarts(body, keys.length > MAX_MEMBERS ? keys.slice(0, MAX_MEMBERS) : keys);
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i]!;
    const end = starts[i + 1] ?? body.length;
    if (end - start < steady) {
      cuts.memory += NOTHING;
      continue;
    }
    const hash = hashOf(body.subarray(start, end));
    const short = hash.slice(0, REMEMBERED);
    const unchanged = options.previous?.slice(i * REMEMBERED, (i + 1) * REMEMBERED) === short;
    cuts.memory += short;
    // The same text twice in one body is kept in the row the second time.
    if ((end - start < minBytes && !unchanged) || seen.has(hash)) continue;
    seen.add(hash);
    cuts.pieceStarts.push(at);
    cuts.pieceLengths.push(start - at);
    cuts.partStarts.push(start);
    cuts.partLengths.push(end - start);
    cuts.partHashes.push(hash);
    at = end;
  }
  cuts.pieceStarts.push(at);
  cuts.pieceLengths.push(body.length - at);
  return cuts;
}

/** A part's name: 132 bits of its SHA-256, in one native call (no Hash object per part). */
function hashOf(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'base64url').slice(0, 22);
}

/** The stored body back: pieces and parts alternating, a piece first and last. */
export function joinSystem(pieces: readonly string[], parts: readonly string[]): string {
  let text = pieces[0] ?? '';
  for (let i = 0; i < parts.length; i++) text += parts[i]! + (pieces[i + 1] ?? '');
  return text;
}
