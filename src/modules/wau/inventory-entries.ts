// What a heartbeat's `software` array becomes before it is stored: entries without a name and entries
// flagged as system components dropped, text cleaned and clipped, duplicates merged, a stable order,
// and a hash of the result, so an unchanged list is recognised without touching the database. Pure.
import { createHash } from 'node:crypto';

/** At most this many array elements of one heartbeat are looked at (the first, in document order). */
export const MAX_INVENTORY_ENTRIES = 5000;

/** Longest stored text per field, in UTF-16 code units; registry values can be arbitrarily long. */
export const FIELD_LIMITS = { name: 256, publisher: 256, version: 128, install_date: 32 } as const;

export interface InventoryEntry {
  name: string;
  publisher: string;
  version: string;
  install_date: string;
}

/**
 * The storable entries of a heartbeat's `software` value, or null when it carries no list (absent or not
 * an array): then the agent could not read its inventory, and the stored one stays as it is.
 */
export function normaliseInventory(software: unknown): InventoryEntry[] | null {
  if (!Array.isArray(software)) return null;
  const byKey = new Map<string, InventoryEntry>();
  for (const raw of software.slice(0, MAX_INVENTORY_ENTRIES)) {
    const entry = toEntry(raw);
    if (!entry) continue;
    // One row per name, publisher and version: the 64-bit and 32-bit registry views often list a
    // program twice. The first one's install date stays.
    const key = JSON.stringify([entry.name, entry.publisher, entry.version]);
    if (!byKey.has(key)) byKey.set(key, entry);
  }
  return [...byKey.values()].sort(compareEntries);
}

/** SHA-256 of the normalised list: equal lists, whatever order they arrived in, hash equally. */
export function inventoryHash(entries: readonly InventoryEntry[]): string {
  const hash = createHash('sha256');
  for (const e of entries) hash.update(JSON.stringify([e.name, e.publisher, e.version, e.install_date])).update('\n');
  return hash.digest('hex');
}

/** `system_component: true`, or the registry's own `SystemComponent` (1, "1", "0x1"). */
export function isSystemComponent(entry: Record<string, unknown>): boolean {
  return [entry.system_component, entry.SystemComponent].some((v) => v === true || v === 1 || v === '1' || v === 'true' || v === '0x1');
}

function toEntry(raw: unknown): InventoryEntry | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const e = raw as Record<string, unknown>;
  if (isSystemComponent(e)) return null;
  // The contract's names, or the registry's value names for agents that pass them through.
  const name = clean(e.name ?? e.DisplayName, FIELD_LIMITS.name);
  if (!name) return null;
  return {
    name,
    publisher: clean(e.publisher ?? e.Publisher, FIELD_LIMITS.publisher),
    version: clean(e.version ?? e.DisplayVersion, FIELD_LIMITS.version),
    install_date: clean(e.install_date ?? e.InstallDate, FIELD_LIMITS.install_date),
  };
}

/**
 * Text (numbers as their decimal spelling) without control characters (PostgreSQL text cannot hold
 * NUL), whitespace trimmed, clipped without leaving half a surrogate pair; anything else is "".
 */
function clean(value: unknown, limit: number): string {
  const text = typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : '';
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  let result = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  if (result.length > limit) {
    result = result.slice(0, limit);
    if (/[\ud800-\udbff]$/.test(result)) result = result.slice(0, -1);
    result = result.trimEnd();
  }
  return result;
}

/** Byte (code unit) order of name, publisher, version: the same on every machine and database. */
function compareEntries(a: InventoryEntry, b: InventoryEntry): number {
  return cmp(a.name, b.name) || cmp(a.publisher, b.publisher) || cmp(a.version, b.version);
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
