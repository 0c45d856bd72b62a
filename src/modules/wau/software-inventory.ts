// The Windows software inventory as heartbeats report it (spec Agent rule 2, contract §2 `software[]`):
// each agent's stored list is replaced by its latest heartbeat's list when that differs. Heartbeats
// arrive every minute and the list rarely changes, so the normal case must cost nothing: the list's hash
// is compared with an in-memory copy of the stored hash (no query at all), then, after a restart or
// when the copy is old, with the stored hash (one primary-key read). Only a changed list is written.
// Before even that, a fingerprint of the raw list (raw-inventory-print.ts) equal to the one remembered
// with the hash spares normalising and hashing a list that did not change since the last heartbeat.
import type { Kysely } from 'kysely';
import type { Database, Platform } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { inventoryHash, normaliseInventory, type InventoryEntry } from './inventory-entries.js';
import { rawInventoryPrint } from './raw-inventory-print.js';
import * as repo from './inventory.repo.js';

/**
 * How long a remembered hash is trusted without looking at the database again. The database can change
 * behind this process (the agent deleted and registered again, another server instance), and this
 * bounds how long such a change goes unnoticed at one cheap read per agent per period.
 */
export const HASH_RECHECK_MS = 10 * 60_000;

export interface InventoryReport {
  agentId: string;
  platform: Platform;
  /** The heartbeat's `software` value, unchecked. */
  software: unknown;
  receivedAt: Date;
}

export type InventoryOutcome = 'ignored' | 'unchanged' | 'stored';

/** A heartbeat's list as `examine` found it: nothing to store, or a list that may differ from the stored one. */
export type ExaminedInventory =
  | { outcome: 'ignored' | 'unchanged' }
  | { outcome: 'candidate'; agentId: string; receivedAt: Date; entries: InventoryEntry[]; hash: string; rawPrint: string };

const IGNORED: ExaminedInventory = { outcome: 'ignored' };
const UNCHANGED: ExaminedInventory = { outcome: 'unchanged' };

export class SoftwareInventory {
  /** Per agent: the stored list's hash, when it was last compared with the database, and the raw list's fingerprint then. */
  readonly #known = new Map<string, { hash: string; checkedAt: number; rawPrint: string }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /**
   * Reads the heartbeat's list when the heartbeat arrives, without the database: whether it is the
   * stored one as far as this process knows, and if not, its normalised entries and hash for `record`.
   * Done on arrival so that the list (hundreds of objects) is not kept alive while the heartbeat waits
   * for its batch's commit: kept, it is copied by every young-generation collection meanwhile. Heartbeats
   * of other platforms, and heartbeats without a `software` array (the agent could not read it), leave
   * the stored list as it is.
   */
  examine(report: InventoryReport): ExaminedInventory {
    if (report.platform !== 'windows') return IGNORED;
    const rawPrint = rawInventoryPrint(report.software);
    if (rawPrint === null) return IGNORED;
    const now = this.clock.now().getTime();
    const known = this.#known.get(report.agentId);
    const fresh = known !== undefined && now >= known.checkedAt && now - known.checkedAt < HASH_RECHECK_MS;
    // The same raw list as the one the remembered hash was taken of: the same normalised list.
    if (fresh && known.rawPrint === rawPrint) return UNCHANGED;
    const entries = normaliseInventory(report.software);
    if (entries === null) return IGNORED;
    const hash = inventoryHash(entries);
    if (fresh && known.hash === hash) {
      // Another spelling of the same list (order, duplicates): remember this one's fingerprint too.
      known.rawPrint = rawPrint;
      return UNCHANGED;
    }
    return { outcome: 'candidate', agentId: report.agentId, receivedAt: report.receivedAt, entries, hash, rawPrint };
  }

  /** Stores an examined inventory if it differs from the stored one (called once the heartbeat is stored). */
  async record(examined: ExaminedInventory): Promise<InventoryOutcome> {
    if (examined.outcome !== 'candidate') return examined.outcome;
    const { agentId, entries, hash, rawPrint } = examined;
    const now = this.clock.now().getTime();
    if ((await repo.findInventoryHash(this.db, agentId)) === hash) {
      this.#known.set(agentId, { hash, checkedAt: now, rawPrint });
      return 'unchanged';
    }
    const stored = await this.db.transaction().execute(async (trx) => {
      const claimed = await repo.claimInventory(trx, { agentId, hash, entryCount: entries.length, receivedAt: examined.receivedAt });
      if (claimed) await repo.replaceInventoryRows(trx, agentId, entries);
      return claimed;
    });
    // Not claimed: the list was stored meanwhile, or a later heartbeat's list was; the next heartbeat
    // finds out which from the database.
    if (stored) this.#known.set(agentId, { hash, checkedAt: now, rawPrint });
    else this.#known.delete(agentId);
    return stored ? 'stored' : 'unchanged';
  }

  /**
   * Forgets the remembered hash (on registration): a deleted agent registered again under its old id
   * has no inventory any more, and its first heartbeat must not be taken for an unchanged one.
   */
  forget(agentId: string): void {
    this.#known.delete(agentId);
  }
}
