import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, keyHint } from './key-format.js';

describe('API key format', () => {
  it('is rmm_ plus 40 base62 characters, different every time', () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
    for (const key of keys) expect(key).toMatch(/^rmm_[0-9A-Za-z]{40}$/);
  });

  it('uses the whole alphabet', () => {
    const seen = new Set(Array.from({ length: 300 }, generateApiKey).join('').slice(4));
    expect(seen.size).toBeGreaterThanOrEqual(62);
  });

  it('hashes with SHA-256 and hints with the first 8 and last 4 characters', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(keyHint('rmm_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd')).toBe('rmm_ABCD…abcd');
  });
});
