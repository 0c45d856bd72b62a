// How far V8 lets the old generation grow past what survived the last full collection before it
// collects again. V8 derives that factor from how cheap collection looks: with a busy server's live heap
// near 100 MB (10,000 agent sockets and their state) and little promoted per young-generation
// collection, it picks its minimum, 1.1, which leaves about 9 MB of room, less than the 16 MB young
// generation. V8 starts marking the old generation once the room left is smaller than the young
// generation, so it marked again as soon as anything was promoted: in fleet-scale (10,000 agents on
// PostgreSQL) the server made 52 full collections a minute (441 ms of pauses), and its young-generation
// collections, often running beside the marking, cost more too. With a factor of 2: 4 a minute (22–34
// ms), p99 inside the server 30–34 ms instead of 65, CPU 19–20 % of a core instead of 26; the price is
// memory the collector has not yet reclaimed (about 9 KiB resident per agent instead of 5). On the
// embedded database the server's CPU halved (184 full collections a minute, 1.5 s of pauses, became 6).
// Under a heavy, steady ingest (B1) it made no difference on PostgreSQL and took 17 % less CPU on
// PGlite, one run each, where a factor of 1.5 cost 25 % more CPU on PostgreSQL; a script that promotes
// heavily made three times the full collections with a fixed 2 as with V8's own choice, so
// HEAP_GROWTH_PERCENT=0 gives the choice back to V8 (bench/README.md, 2026-11-27, 14:35).
import v8 from 'node:v8';

/** The server's default: the old generation may grow to twice what survived (V8's default factor is 1.1 to 4, as it judges). */
export const DEFAULT_HEAP_GROWTH_PERCENT = 100;

/**
 * Sets the growth factor to 1 + percent/100 for this process; 0 leaves it to V8. A V8 flag that is read
 * at every full collection, so setting it after start-up takes effect from the next one.
 */
export function setHeapGrowth(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0 || percent > 400) throw new RangeError(`heap growth must be a whole percent from 0 to 400, got ${percent}`);
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
