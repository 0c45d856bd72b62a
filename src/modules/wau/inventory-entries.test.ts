// What a heartbeat's `software` array becomes before storing: system components and nameless entries
// dropped, text cleaned and clipped, duplicates merged, bounded, and an order-independent hash.
import { describe, expect, it } from 'vitest';
import { FIELD_LIMITS, inventoryHash, MAX_INVENTORY_ENTRIES, normaliseInventory } from './inventory-entries.js';

const entry = (name: string, extra: Record<string, unknown> = {}) => ({ name, version: '1.0', publisher: 'P', install_date: '2026-01-01', ...extra });

describe('normaliseInventory', () => {
  it('is null for a heartbeat without a software array (the stored list then stays)', () => {
    for (const value of [undefined, null, {}, 'x', 3]) expect(normaliseInventory(value)).toBeNull();
    expect(normaliseInventory([])).toEqual([]);
  });

  it('drops system components in every spelling, and entries without a name', () => {
    const software = [
      entry('Kept'),
      entry('Flag', { system_component: true }),
      entry('Registry number', { SystemComponent: 1 }),
      entry('Registry text', { SystemComponent: '1' }),
      entry('Not a component', { SystemComponent: 0, system_component: false }),
      entry('   '),
      { version: '2' },
      null,
      'text',
      [entry('nested')],
    ];
    expect(normaliseInventory(software)!.map((e) => e.name)).toEqual(['Kept', 'Not a component']);
  });

  it('reads the registry value names too, turns numbers into text, removes control characters and clips', () => {
    const long = 'x'.repeat(FIELD_LIMITS.name - 1) + '😀'; // the emoji's pair straddles the limit
    const [a, b] = normaliseInventory([
      { DisplayName: 'From\u0000registry', DisplayVersion: 7, Publisher: ' Acme ', InstallDate: '20260101' },
      { name: long, version: 'v'.repeat(500), publisher: {}, install_date: null },
    ])!;
    expect(a).toEqual({ name: 'From registry', version: '7', publisher: 'Acme', install_date: '20260101' });
    expect(b).toEqual({ name: 'x'.repeat(FIELD_LIMITS.name - 1), version: 'v'.repeat(FIELD_LIMITS.version), publisher: '', install_date: '' });
  });

  it('merges duplicates (the two registry views), orders by name, publisher, version, and looks at the first 5,000 elements only', () => {
    const list = normaliseInventory([entry('b'), entry('a', { version: '2' }), entry('a'), entry('b', { install_date: 'later' })])!;
    expect(list.map((e) => `${e.name} ${e.version} ${e.install_date}`)).toEqual(['a 1.0 2026-01-01', 'a 2 2026-01-01', 'b 1.0 2026-01-01']);
    const many = Array.from({ length: MAX_INVENTORY_ENTRIES + 10 }, (_, i) => entry(`p${String(i).padStart(5, '0')}`));
    const bounded = normaliseInventory(many)!;
    expect(bounded).toHaveLength(MAX_INVENTORY_ENTRIES);
    expect(bounded.at(-1)!.name).toBe(`p${String(MAX_INVENTORY_ENTRIES - 1).padStart(5, '0')}`);
  });
});

describe('inventoryHash', () => {
  it('is equal for equal lists in any order and differs for any changed field', () => {
    const hash = (software: unknown[]) => inventoryHash(normaliseInventory(software)!);
    const base = hash([entry('a'), entry('b')]);
    expect(hash([entry('b'), entry('a'), entry('a')])).toBe(base);
    for (const changed of [{ version: '1.1' }, { publisher: 'Q' }, { install_date: '2026-01-02' }]) {
      expect(hash([entry('a'), entry('b', changed)])).not.toBe(base);
    }
    expect(hash([])).not.toBe(base);
  });
});
