// Which heartbeat fields become which metric samples (contract §2). Pure and forgiving: a missing,
// non-numeric or non-finite field yields no sample and never an error, because agents of every
// platform and version send what they have. Labels: the disk's mount, the interface's or gateway's name;
// "" for scalar metrics.

import { isObject } from '../agents/system-facts.js';

/** The metrics taken from heartbeats. */
export const HEARTBEAT_METRIC_NAMES = [
  'cpu_usage',
  'memory_used_percent',
  'memory_used_bytes',
  'memory_total_bytes',
  'uptime_seconds',
  'disk_used_percent',
  'disk_used_bytes',
  'interface_rx_bytes',
  'interface_tx_bytes',
  'gateway_rtt_ms',
  'gateway_loss_percent',
] as const;

/** Every metric series: the heartbeats', and perfdata of checks (issue 61, label "<check id>/<perfdata label>", in the base unit: s, B). */
export const METRIC_NAMES = [...HEARTBEAT_METRIC_NAMES, 'check_perf'] as const;

/**
 * At most this many samples per heartbeat (the first ones, in extraction order): a firewall with a few
 * hundred VLAN interfaces stays well below it, and a hostile 4 MiB body cannot turn into a million rows.
 */
export const MAX_SAMPLES_PER_HEARTBEAT = 2_000;

export type MetricName = (typeof METRIC_NAMES)[number];

export interface ExtractedSample {
  metric: MetricName;
  label: string;
  value: number;
}

type Json = Record<string, unknown>;

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
// A NUL cannot be stored in a text column (it failed the whole heartbeat batch) nor asked for in a query.
const labelOf = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= 255 && !v.includes('\u0000') ? v : undefined);

/** Per-item metrics of a list (disks, interfaces, gateways): which label field, which value fields. */
const LISTS: ReadonlyArray<{ items: (body: Json) => unknown; label: string; fields: ReadonlyArray<{ field: string; metric: MetricName }> }> = [
  {
    items: (b) => b.disks,
    label: 'mount',
    fields: [
      { field: 'used_percent', metric: 'disk_used_percent' },
      { field: 'used_bytes', metric: 'disk_used_bytes' },
    ],
  },
  {
    items: (b) => (isObject(b.network) ? b.network.interfaces : undefined),
    label: 'name',
    fields: [
      { field: 'rx_bytes', metric: 'interface_rx_bytes' },
      { field: 'tx_bytes', metric: 'interface_tx_bytes' },
    ],
  },
  {
    items: (b) => b.gateways,
    label: 'name',
    fields: [
      { field: 'rtt_ms', metric: 'gateway_rtt_ms' },
      { field: 'loss_percent', metric: 'gateway_loss_percent' },
    ],
  },
];

function add(samples: ExtractedSample[], metric: MetricName, value: number | undefined, label: string): void {
  if (value !== undefined && samples.length < MAX_SAMPLES_PER_HEARTBEAT) samples.push({ metric, label, value });
}

/**
 * Runs for every heartbeat, so it allocates nothing but the samples: no closure, no filtered copy of a
 * list, no destructured pairs (2.9–4.4 KB a heartbeat of the fleet simulator's three profiles before,
 * 1.2–2.6 after).
 */
export function extractSamples(body: Json): ExtractedSample[] {
  const samples: ExtractedSample[] = [];
  add(samples, 'cpu_usage', isObject(body.cpu) ? num(body.cpu.usage_percent) : undefined, '');
  if (isObject(body.memory)) {
    const used = num(body.memory.used_bytes);
    const total = num(body.memory.total_bytes);
    add(samples, 'memory_used_bytes', used, '');
    add(samples, 'memory_total_bytes', total, '');
    const derived = used !== undefined && total !== undefined && total > 0 ? (used / total) * 100 : undefined;
    add(samples, 'memory_used_percent', num(body.memory.used_percent) ?? derived, '');
  }
  add(samples, 'uptime_seconds', num(body.uptime_seconds), '');

  for (const list of LISTS) {
    const items = list.items(body);
    if (!Array.isArray(items)) continue;
    for (const item of items) {
      if (!isObject(item)) continue;
      const label = labelOf(item[list.label]);
      if (label === undefined) continue;
      for (const { field, metric } of list.fields) add(samples, metric, num(item[field]), label);
    }
  }
  return samples;
}
