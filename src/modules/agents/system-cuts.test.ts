// The cuts of a stored heartbeat body (system-cuts.ts): whatever the text, its pieces and parts joined
// in order give back the exact bytes, and each part is exactly one top-level member's value. Inputs are
// generated (seeded, so a failure repeats): whitespace of every kind around every token, escapes (an
// escaped quote and backslash before a closing quote), non-ASCII and astral characters, deep nesting,
// duplicate keys, unusual number spellings.
import { describe, expect, it } from 'vitest';
import { joinSystem, memberValueRanges, systemCuts } from './system-cuts.js';

/** A small seeded generator (mulberry32), so a failing input can be found again. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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

/** Slices by characters (code points), as PostgreSQL's substr does on a UTF-8 database. */
function sliceChars(body: string, start: number, length: number): string {
  return [...body].slice(start, start + length).join('');
}

describe('systemCuts', () => {
  it('gives back the exact text for generated bodies, with every part one member value', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const random = seeded(seed);
      const body = `${SPACES[seed % SPACES.length]}${object(random, 0, 1 + Math.floor(random() * 8))}${SPACES[(seed >> 2) % SPACES.length]}`;
      expect(() => JSON.parse(body), body).not.toThrow();
      const bytes = Buffer.from(body);
      const cuts = systemCuts(bytes, { minBytes: 1 + Math.floor(random() * 40), steadyMinBytes: 1, previous: random() < 0.5 ? systemCuts(bytes).memory : undefined });
      const pieces = cuts.pieceStarts.map((s, i) => sliceChars(body, s, cuts.pieceLengths[i]!));
      const parts = cuts.partStarts.map((s, i) => sliceChars(body, s, cuts.partLengths[i]!));
      expect(pieces).toHaveLength(parts.length + 1);
      expect(joinSystem(pieces, parts), `seed ${seed}`).toBe(body);
      for (const part of parts) expect(() => JSON.parse(part), `seed ${seed}: ${part}`).not.toThrow();
      // Every top-level member was found: the ranges, parsed, are the values JSON.parse saw (the last of a duplicate key wins there).
      const values = memberValueRanges(bytes).map(([s, e]) => JSON.parse(bytes.subarray(s, e).toString()) as unknown);
      const members = JSON.parse(body) as Record<string, unknown>;
      for (const value of Object.values(members)) expect(values).toContainEqual(value);
    }
  });

  it('cuts nothing out of what is not an object, and keeps equal values in the row the second time', () => {
    for (const body of ['[1, 2, 3]', '"text"', '42', ' null ', '{}', '{ }']) {
      const cuts = systemCuts(Buffer.from(body), { minBytes: 1 });
      expect(cuts.partHashes).toEqual([]);
      expect(sliceChars(body, cuts.pieceStarts[0]!, cuts.pieceLengths[0]!)).toBe(body);
    }
    const twice = '{"x": [1, 2, 3], "y": [1, 2, 3], "z": "ü"}';
    const cuts = systemCuts(Buffer.from(twice), { minBytes: 5 });
    expect(cuts.partHashes).toHaveLength(1);
    expect(cuts.partStarts).toEqual([6]);
  });

  it('counts characters, not bytes, where the text has multi-byte ones before a part', () => {
    const body = '{"name": "Müller 東京 😀", "big": [' + '1,'.repeat(300) + '1]}';
    const cuts = systemCuts(Buffer.from(body));
    expect(cuts.partHashes).toHaveLength(1);
    expect(sliceChars(body, cuts.partStarts[0]!, cuts.partLengths[0]!)).toBe('[' + '1,'.repeat(300) + '1]');
  });

  it('makes a smaller value a part only when the same member was the same in the previous body', () => {
    const value = (n: number) => `{"hardware": "${'x'.repeat(150)}", "cpu": {"usage_percent": ${n}, "pad": "${'y'.repeat(120)}"}, "tiny": 1}`;
    const first = systemCuts(Buffer.from(value(1)));
    expect(first.partHashes).toEqual([]);
    const second = systemCuts(Buffer.from(value(2)), { previous: first.memory });
    expect(second.partHashes).toHaveLength(1);
    expect(second.partStarts).toEqual([13]);
    // A large value is a part without any memory.
    expect(systemCuts(Buffer.from(`{"a": "${'z'.repeat(600)}"}`)).partHashes).toHaveLength(1);
  });
});
