// What capacity.ts reads from the server's GET /metrics (src/modules/prometheus), as Prometheus would:
// the V8 heap (prom-client's default metrics, prefix rmm_) and the heartbeats answered with the
// histogram of their times in the server, from which a window's p99 is estimated.

export interface Scrape {
  /** V8's used heap plus the memory V8 counts as external (Buffers and the like), in bytes. */
  heapBytes: number;
  /** Heartbeat requests answered so far, every outcome. */
  heartbeats: number;
  /** rmm_heartbeat_duration_seconds: cumulative counts by upper bound (seconds), ascending; stored heartbeats only. */
  buckets: Array<[number, number]>;
}

/** Samples of the text format: `name{labels} value`, as [name, labels, value]. */
function samples(text: string): Array<[string, string, number]> {
  const out: Array<[string, string, number]> = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match) out.push([match[1]!, match[2] ?? '', Number(match[3])]);
  }
  return out;
}

const upperBound = (le: string | undefined) => (le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le));

export async function scrapeFigures(url: string, token: string): Promise<Scrape> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET /metrics: HTTP ${res.status} ${await res.text()}`);
  const all = samples(await res.text());
  const sum = (name: string) => all.filter(([n]) => n === name).reduce((total, [, , v]) => total + v, 0);
  const buckets = all
    .filter(([n]) => n === 'rmm_heartbeat_duration_seconds_bucket')
    .map(([, labels, v]): [number, number] => [upperBound(/le="([^"]+)"/.exec(labels)?.[1]), v])
    .sort((a, b) => a[0] - b[0]);
  return { heapBytes: sum('rmm_nodejs_heap_size_used_bytes') + sum('rmm_nodejs_external_memory_bytes'), heartbeats: sum('rmm_heartbeats_total'), buckets };
}

/**
 * The q-quantile (0–1) of the times between two scrapes, in ms, interpolated within its bucket as
 * Prometheus's histogram_quantile does: as fine as the buckets (5, 10, 25, 50 ms…), no finer.
 */
export function quantileBetween(from: Scrape, to: Scrape, q: number): number {
  const counts = to.buckets.map(([le, n], i): [number, number] => [le, n - (from.buckets[i]?.[1] ?? 0)]);
  const total = counts.at(-1)?.[1] ?? 0;
  if (total <= 0) return Number.NaN;
  const rank = q * total;
  let [lower, below] = [0, 0];
  for (const [le, n] of counts) {
    if (n >= rank) return Number.isFinite(le) ? (lower + ((le - lower) * (rank - below)) / Math.max(1, n - below)) * 1000 : lower * 1000;
    [lower, below] = [le, n];
  }
  return Number.NaN;
}
