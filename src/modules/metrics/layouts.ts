// Layouts: which metric and label each position of a heartbeat's value array holds. An agent sends the
// same list heartbeat after heartbeat (and agents with the same hardware share one), so each distinct
// list is stored once in metric_layouts and heartbeats refer to it by id. Ids are cached in memory;
// a miss costs one upsert, which is safe when several servers share the database.
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ExtractedSample } from './extract-samples.js';

/** Bounds the cache; an agent key holder sending ever-new labels cannot grow it without limit. */
const MAX_CACHED_LAYOUTS = 10_000;

export class LayoutRegistry {
  #ids = new Map<string, number>();

  constructor(private readonly db: Kysely<Database>) {}

  /** The layout id for each sample list, creating missing layouts in one statement. */
  async idsFor(lists: ReadonlyArray<readonly ExtractedSample[]>): Promise<number[]> {
    const keys = lists.map(layoutKey);
    const missing = new Map<string, readonly ExtractedSample[]>();
    keys.forEach((key, i) => {
      if (!this.#ids.has(key)) missing.set(key, lists[i]!);
    });
    if (missing.size > 0) await this.#create(missing);
    return keys.map((key) => this.#ids.get(key)!);
  }

  async #create(missing: Map<string, readonly ExtractedSample[]>): Promise<void> {
    const byFingerprint = new Map<string, string>();
    const rows = [...missing].map(([key, samples]) => {
      const fingerprint = createHash('sha256').update(key).digest('hex');
      byFingerprint.set(fingerprint, key);
      return {
        fingerprint,
        metrics: samples.map((s) => s.metric),
        labels: samples.map((s) => s.label),
      };
    });
    // `do update` (a no-op) instead of `do nothing`, so existing rows are returned too.
    const created = await this.db
      .insertInto('metric_layouts')
      .values(rows.map((r) => ({ fingerprint: r.fingerprint, metrics: sql`${r.metrics}::text[]`, labels: sql`${r.labels}::text[]` })))
      .onConflict((oc) => oc.column('fingerprint').doUpdateSet({ fingerprint: (eb) => eb.ref('excluded.fingerprint') }))
      .returning(['id', 'fingerprint'])
      .execute();
    if (this.#ids.size + created.length > MAX_CACHED_LAYOUTS) this.#ids.clear();
    for (const row of created) this.#ids.set(byFingerprint.get(row.fingerprint)!, row.id);
  }
}

/** The list's identity: metric and label of each position, in order (labels may hold any character). */
function layoutKey(samples: readonly ExtractedSample[]): string {
  return JSON.stringify(samples.map((s) => [s.metric, s.label]));
}
