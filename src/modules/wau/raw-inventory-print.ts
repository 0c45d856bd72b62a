// A cheap fingerprint of a heartbeat's raw `software` value, so the normal case (the same list as a
// minute ago) costs neither the normalised entries nor their SHA-256: at 10,000 agents those made about a
// tenth of the server's allocation per heartbeat, and with it a tenth of its young-generation collections
// (issue 36, build 5). It reads exactly the fields the normalisation reads, in document order, and
// allocates nothing per entry. Two 32-bit FNV-1a style hashes over different seeds give 64 bits: not
// collision-proof against an agent crafting its own list, which could then hide a change of its own
// inventory until the remembered hash is rechecked (HASH_RECHECK_MS), never anyone else's.
import { MAX_INVENTORY_ENTRIES } from './inventory-entries.js';

/** The fields toEntry() and isSystemComponent() read, in a fixed order. */
const FIELDS = ['system_component', 'SystemComponent', 'name', 'DisplayName', 'publisher', 'Publisher', 'version', 'DisplayVersion', 'install_date', 'InstallDate'] as const;

const numberBits = new Float64Array(1);
const numberWords = new Uint32Array(numberBits.buffer);

class Print {
  a = 0x811c9dc5;
  b = 0x01000193 ^ 0x5bd1e995;

  word(w: number): void {
    this.a = Math.imul(this.a ^ w, 0x01000193);
    this.b = Math.imul(this.b ^ w, 0x5bd1e995) ^ (this.b >>> 15);
  }

  value(v: unknown): void {
    if (typeof v === 'string') {
      this.word(1);
      this.word(v.length);
      for (let i = 0; i < v.length; i++) this.word(v.charCodeAt(i));
    } else if (typeof v === 'number') {
      numberBits[0] = v;
      this.word(2);
      this.word(numberWords[0]!);
      this.word(numberWords[1]!);
    } else if (typeof v === 'boolean') {
      this.word(v ? 3 : 4);
    } else {
      // undefined, null, objects and arrays: the normalisation reads none of them as text.
      this.word(v === undefined ? 5 : 6);
    }
  }
}

/** The fingerprint of `software` as the normalisation would read it, or null when it is not an array. */
export function rawInventoryPrint(software: unknown): string | null {
  if (!Array.isArray(software)) return null;
  const print = new Print();
  const count = Math.min(software.length, MAX_INVENTORY_ENTRIES);
  print.word(count);
  for (let i = 0; i < count; i++) {
    const entry: unknown = software[i];
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      print.word(7);
      continue;
    }
    const fields = entry as Record<string, unknown>;
    print.word(8);
    for (const field of FIELDS) print.value(fields[field]);
  }
  return `${(print.a >>> 0).toString(36)}.${(print.b >>> 0).toString(36)}`;
}
