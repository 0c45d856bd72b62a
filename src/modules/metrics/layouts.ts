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

/** A stored layout: its id and what each position holds. */
interface KnownLayout {
  readonly id: number;
  readonly metrics: readonly string[];
  readonly labels: readonly string[];
}

export class LayoutRegistry {
  /**
   * Known layouts by a hash of their content, compared position by position on a hit: finding an agent's
   * layout allocates nothing. The JSON text of metrics and labels that keyed this cache before was built
   * for every heartbeat, a few KB each (bench/README.md, 2026-11-27 evening).
   */
  #known = new Map<number, KnownLayout[]>();
  #count = 0;

  constructor(private readonly db: Kysely<Database>) {}

  /** The layout id for each sample list, creating missing layouts in one statement. */
  async idsFor(lists: ReadonlyArray<readonly ExtractedSample[]>): Promise<number[]> {
    const ids = lists.map((list) => this.#find(list)?.id);
    if (ids.includes(undefined)) {
      const missing = new Map<string, readonly ExtractedSample[]>();
      lists.forEach((list, i) => {
        if (ids[i] === undefined) missing.set(layoutKey(list), list);
      });
      const created = await this.#create([...missing.values()]);
      lists.forEach((list, i) => {
        ids[i] ??= created.get(missing.get(layoutKey(list))!);
      });
    }
    return ids as number[];
  }

  #find(list: readonly ExtractedSample[]): KnownLayout | undefined {
    return this.#known.get(contentHash(list))?.find((known) => holdsTheSame(known, list));
  }

  #remember(list: readonly ExtractedSample[], id: number): void {
    if (this.#find(list)) return;
    if (this.#count >= MAX_CACHED_LAYOUTS) {
      this.#known.clear();
      this.#count = 0;
    }
    const layout = { id, metrics: list.map((s) => s.metric), labels: list.map((s) => s.label) };
    const hash = contentHash(list);
    const same = this.#known.get(hash);
    if (same) same.push(layout);
    else this.#known.set(hash, [layout]);
    this.#count += 1;
  }

  /** Stores the lists' layouts (existing rows are returned too) and remembers their ids. */
  async #create(lists: ReadonlyArray<readonly ExtractedSample[]>): Promise<Map<readonly ExtractedSample[], number>> {
    const rows = lists.map((samples) => ({
      fingerprint: createHash('sha256').update(layoutKey(samples)).digest('hex'),
      metrics: samples.map((s) => s.metric),
      labels: samples.map((s) => s.label),
    }));
    // `do update` (a no-op) instead of `do nothing`, so existing rows are returned too.
    const stored = await this.db
      .insertInto('metric_layouts')
      .values(rows.map((r) => ({ fingerprint: r.fingerprint, metrics: sql`${r.metrics}::text[]`, labels: sql`${r.labels}::text[]` })))
      .onConflict((oc) => oc.column('fingerprint').doUpdateSet({ fingerprint: (eb) => eb.ref('excluded.fingerprint') }))
      .returning(['id', 'fingerprint'])
      .execute();
    const idByFingerprint = new Map(stored.map((row) => [row.fingerprint, row.id]));
    const ids = new Map<readonly ExtractedSample[], number>();
    lists.forEach((samples, i) => {
      const id = idByFingerprint.get(rows[i]!.fingerprint)!;
      ids.set(samples, id);
      this.#remember(samples, id);
    });
    return ids;
  }
}

/** The list's identity as stored: metric and label of each position, in order (labels may hold any character). */
function layoutKey(samples: readonly ExtractedSample[]): string {
  return JSON.stringify(samples.map((s) => [s.metric, s.label]));
}

/** FNV-1a over each position's metric and label; a collision only costs a comparison (holdsTheSame). */
function contentHash(samples: readonly ExtractedSample[]): number {
  let hash = 0x811c9dc5;
  for (const sample of samples) {
    hash = mix(mix(hash, sample.metric), sample.label);
  }
  return hash >>> 0;
}

function mix(hash: number, text: string): number {
  let h = hash;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  // The text's length ends it, so ["ab", ""] and ["a", "b"] differ.
  return Math.imul(h ^ (text.length + 0x10000), 0x01000193);
}

function holdsTheSame(known: KnownLayout, samples: readonly ExtractedSample[]): boolean {
  if (known.metrics.length !== samples.length) return false;
  for (let i = 0; i < samples.length; i += 1) {
    if (known.metrics[i] !== samples[i]!.metric || known.labels[i] !== samples[i]!.label) return false;
  }
  return true;
}
