// The cuts of a stored heartbeat body (system-cuts.ts): whatever the text, its pieces and parts joined
// in order give back the exact bytes, each slice whole UTF-8, and in a body without traps each part is
// exactly one top-level member. Inputs are
// generated (seeded, so a failure repeats): whitespace of every kind around every token, escapes (an
// escaped quote and backslash before a closing quote), non-ASCII and astral characters, deep nesting,
// duplicate keys, unusual number spellings.
import { describe, expect, it } from 'vitest';
import { joinSystem, MAX_MEMBERS, memberStarts, systemCuts } from './system-cuts.js';
import { seeded } from '../../../test/helpers/seeded-random.js';

const SPACES = ['', ' ', '\n', '\t', '\r\n', '  \n  '];
const STRINGS = ['plain', 'quote \\" inside', 'ends in backslash \\\\', '\\\\\\"', 'Müller – 東京 😀', '\\u00e9\\ud83d\\ude00', '{[not structure]}', ',:'];
const NUMBERS = ['0', '-0', '1.0', '1e3', '1E+2', '-1.5e-7', '12345678901234567890', '0.000'];

function text(random: () => number, depth: number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const ws = () => pick(SPACES);
  const roll = random();
  if (depth > 4 || roll < 0.35) {
    const scalar = random();
    return scalar < 0.5 ? `"${pick(STRINGS)}"` : scalar < 0.85 ? pick(NUMBERS) : pick(['true', 'false', 'null']);
  }
  const count = Math.floor(random() * 6);
  if (roll < 0.6) return `[${ws()}${Array.from({ length: count }, () => text(random, depth + 1)).join(`${ws()},${ws()}`)}${ws()}]`;
  return object(random, depth + 1, count);
}

function object(random: () => number, depth: number, count: number): string {
  const ws = () => SPACES[Math.floor(random() * SPACES.length)]!;
  const keys = ['a', 'a', 'b\\"q', 'ü', 'long_key_name', '😀'];
  const members = Array.from({ length: count }, () => `"${keys[Math.floor(random() * keys.length)]}"${ws()}:${ws()}${text(random, depth)}`);
  return `{${ws()}${members.join(`${ws()},${ws()}`)}${ws()}}`;
}

/** Slices the body's UTF-8 by bytes, as PostgreSQL's substring() on the bytea parameter does; each slice must decode alone. */
function sliceBytes(body: string, start: number, length: number): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(body).subarray(start, start + length));
}

/** The cuts of `body` as slices: pieces and parts. */
function slices(body: string, keys: readonly string[], options: Parameters<typeof systemCuts>[2] = {}) {
  const cuts = systemCuts(Buffer.from(body), keys, options);
  return {
    cuts,
    pieces: cuts.pieceStarts.map((s, i) => sliceBytes(body, s, cuts.pieceLengths[i]!)),
    parts: cuts.partStarts.map((s, i) => sliceBytes(body, s, cuts.partLengths[i]!)),
  };
}

describe('systemCuts', () => {
  it('gives back the exact text for generated bodies, whatever their keys say', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const random = seeded(seed);
      const body = `${SPACES[seed % SPACES.length]}${object(random, 0, 1 + Math.floor(random() * 8))}${SPACES[(seed >> 2) % SPACES.length]}`;
      expect(() => JSON.parse(body), body).not.toThrow();
      const keys = Object.keys(JSON.parse(body) as object);
      // The parsed names, and names a body may fool the search with: nested ones, escaped ones, absent ones.
      const traps = random() < 0.5 ? keys : [...keys].reverse().concat(['a', 'ü', 'absent']);
      const bytes = Buffer.from(body);
      const options = { minBytes: 1 + Math.floor(random() * 40), steadyMinBytes: 1, previous: random() < 0.5 ? systemCuts(bytes, traps).memory : undefined };
      const { pieces, parts } = slices(body, traps, options);
      expect(pieces).toHaveLength(parts.length + 1);
      expect(joinSystem(pieces, parts), `seed ${seed}`).toBe(body);
    }
  });

  it('cuts a compact body at its members: each part is one member, name to the next name', () => {
    const body = JSON.stringify({ id: 'x', leases: Array.from({ length: 40 }, (_, i) => ({ ip: `10.0.0.${i}`, name: 'Müller 😀' })), cpu: { usage: 3 }, routes: Array.from({ length: 60 }, (_, i) => `10.${i}.0.0/16`) });
    const { pieces, parts } = slices(body, Object.keys(JSON.parse(body) as object));
    expect(parts.map((p) => p.slice(0, 9))).toEqual(['"leases":', '"routes":']);
    expect(parts[0]!.endsWith('}],')).toBe(true);
    expect(pieces).toEqual(['{"id":"x",', '"cpu":{"usage":3},', '']);
    const bytes = Buffer.from(body);
    expect(memberStarts(bytes, ['id', 'leases', 'cpu', 'routes'])).toEqual([1, 10, bytes.indexOf('"cpu"'), bytes.indexOf('"routes"')]);
  });

  it('keeps what it cannot find in the row, and equal slices in the row the second time', () => {
    for (const body of ['[1, 2, 3]', '"text"', '42', ' null ', '{}', '{ }']) {
      const { cuts, pieces } = slices(body, ['a'], { minBytes: 1 });
      expect(cuts.partHashes).toEqual([]);
      expect(pieces).toEqual([body]);
    }
    // "x" is found inside the first value: two slices of the same text, the second stays in the row.
    const twice = '{"y": ["x", "x"], "x": 1}';
    expect(memberStarts(Buffer.from(twice), ['y', 'x', 'z'])).toEqual([1, 7]);
    const { cuts, pieces, parts } = slices(twice, ['y', 'x'], { minBytes: 1 });
    expect(joinSystem(pieces, parts)).toBe(twice);
    expect(cuts.partStarts).toEqual([1, 7]);
  });

  it('cuts at byte offsets, each slice whole UTF-8, where the text has multi-byte characters before a part', () => {
    const body = '{"name": "Müller 東京 😀", "big": [' + '1,'.repeat(300) + '1]}';
    const { parts } = slices(body, ['name', 'big']);
    expect(parts).toEqual(['"big": [' + '1,'.repeat(300) + '1]}']);
  });

  it('makes a smaller member a part only when the same member was the same in the previous body', () => {
    const value = (n: number) => `{"hardware": "${'x'.repeat(150)}", "cpu": {"usage_percent": ${n}, "pad": "${'y'.repeat(120)}"}, "tiny": 1}`;
    const keys = ['hardware', 'cpu', 'tiny'];
    const first = systemCuts(Buffer.from(value(1)), keys);
    expect(first.partHashes).toEqual([]);
    const second = systemCuts(Buffer.from(value(2)), keys, { previous: first.memory });
    expect(second.partHashes).toHaveLength(1);
    expect(second.partStarts).toEqual([1]);
    // A large member is a part without any memory.
    expect(systemCuts(Buffer.from(`{"a": "${'z'.repeat(600)}"}`), ['a']).partHashes).toHaveLength(1);
  });

  it('cuts a body of many members at the first MAX_MEMBERS only, the rest one member', () => {
    const members = Array.from({ length: 5000 }, (_, i) => [`k${i}`, 'v'.repeat(600)] as const);
    const body = JSON.stringify(Object.fromEntries(members));
    const { cuts, pieces, parts } = slices(body, members.map(([k]) => k), { steadyMinBytes: 1 });
    expect(cuts.partHashes).toHaveLength(MAX_MEMBERS);
    expect(cuts.memory).toHaveLength(MAX_MEMBERS * 8);
    expect(parts.at(-1)!.length).toBeGreaterThan((5000 - MAX_MEMBERS) * 600);
    expect(joinSystem(pieces, parts)).toBe(body);
  });
});

