// The raw fingerprint that lets an unchanged software list skip normalising and hashing: equal for the
// same list, different when any field the normalisation reads differs, blind to the fields it ignores.
import { describe, expect, it } from 'vitest';
import { rawInventoryPrint } from '../src/modules/wau/raw-inventory-print.js';

const list = () => [
  { name: 'Mozilla Firefox', version: '133.0', publisher: 'Mozilla', install_date: '20261101' },
  { DisplayName: '7-Zip', DisplayVersion: 24.08, Publisher: 'Igor Pavlov', SystemComponent: 0 },
];

describe('rawInventoryPrint', () => {
  it('is null when there is no list', () => {
    expect(rawInventoryPrint(undefined)).toBeNull();
    expect(rawInventoryPrint({ name: 'x' })).toBeNull();
  });

  it('is the same for the same list, parsed twice', () => {
    expect(rawInventoryPrint(JSON.parse(JSON.stringify(list())))).toBe(rawInventoryPrint(list()));
  });

  it('changes with every field the normalisation reads, and with order and length', () => {
    const base = rawInventoryPrint(list());
    const variants: Array<(l: ReturnType<typeof list>) => unknown> = [
      (l) => ((l[0]!.version = '134.0'), l),
      (l) => ((l[0]!.install_date = '20261102'), l),
      (l) => ((l[1]!.DisplayVersion = 24.09), l),
      (l) => ((l[1]!.SystemComponent = 1), l),
      (l) => [l[0], { ...l[1], system_component: true }],
      (l) => [l[1], l[0]],
      (l) => [l[0]],
      (l) => [...l, 'not an entry'],
      (l) => [{ ...l[0], name: 'Mozilla Firefo', version: 'x133.0' }, l[1]],
    ];
    const prints = variants.map((change) => rawInventoryPrint(change(list())));
    for (const print of prints) expect(print).not.toBe(base);
    expect(new Set(prints).size).toBe(prints.length);
  });

  it('ignores fields the normalisation does not read', () => {
    const l = list();
    (l[0] as Record<string, unknown>).EstimatedSize = 123_456;
    expect(rawInventoryPrint(l)).toBe(rawInventoryPrint(list()));
  });
});
