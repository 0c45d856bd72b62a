// Metric samples from realistic heartbeats of each platform (contract §2): every metric name, the
// labels of per-disk, per-interface and per-gateway metrics, the derived memory percentage, and
// silence (no sample, no error) for missing or non-numeric fields.
import { describe, expect, it } from 'vitest';
import { MAX_SAMPLES_PER_HEARTBEAT, extractSamples, HEARTBEAT_METRIC_NAMES, type ExtractedSample } from '../src/modules/metrics/extract-samples.js';
import { fixtureText } from './helpers/fixtures.js';

type Json = Record<string, unknown>;
const heartbeat = (platform: string) => JSON.parse(fixtureText(`heartbeat-${platform}.json`)) as Json;
const pick = (samples: ExtractedSample[], metric: string) =>
  samples.filter((s) => s.metric === metric).map((s) => [s.label, s.value] as const);

/** What the fixture says, read independently of the extractor. */
function expected(body: Json) {
  const memory = body.memory as { used_bytes: number; total_bytes: number; used_percent?: number };
  const disks = body.disks as Array<{ mount: string; used_bytes: number; used_percent: number }>;
  const interfaces = (body.network as { interfaces: Array<{ name: string; rx_bytes: number; tx_bytes: number }> }).interfaces;
  const gateways = body.gateways as Array<{ name: string; rtt_ms: number; loss_percent: number }>;
  return {
    cpu_usage: [['', (body.cpu as { usage_percent: number }).usage_percent]],
    memory_used_bytes: [['', memory.used_bytes]],
    memory_total_bytes: [['', memory.total_bytes]],
    memory_used_percent: [['', memory.used_percent ?? (memory.used_bytes / memory.total_bytes) * 100]],
    uptime_seconds: [['', body.uptime_seconds]],
    disk_used_percent: disks.map((d) => [d.mount, d.used_percent]),
    disk_used_bytes: disks.map((d) => [d.mount, d.used_bytes]),
    interface_rx_bytes: interfaces.map((i) => [i.name, i.rx_bytes]),
    interface_tx_bytes: interfaces.map((i) => [i.name, i.tx_bytes]),
    gateway_rtt_ms: gateways.map((g) => [g.name, g.rtt_ms]),
    gateway_loss_percent: gateways.map((g) => [g.name, g.loss_percent]),
  } as Record<string, Array<readonly [string, unknown]>>;
}

describe.each(['freebsd', 'linux', 'windows'])('samples from a %s heartbeat', (platform) => {
  const body = heartbeat(platform);
  const samples = extractSamples(body);
  const want = expected(body);

  it.each(HEARTBEAT_METRIC_NAMES)('%s carries the fixture values and labels', (metric) => {
    expect(want[metric]!.length).toBeGreaterThan(0);
    expect(pick(samples, metric)).toEqual(want[metric]);
  });

  it('yields nothing beyond the eleven metrics', () => {
    expect(samples.length).toBe(Object.values(want).reduce((n, list) => n + list.length, 0));
  });
});

describe('forgiving extraction', () => {
  it('derives memory_used_percent only when the agent did not send one', () => {
    expect(pick(extractSamples({ memory: { used_bytes: 1, total_bytes: 4 } }), 'memory_used_percent')).toEqual([['', 25]]);
    expect(pick(extractSamples({ memory: { used_bytes: 1, total_bytes: 4, used_percent: 30 } }), 'memory_used_percent')).toEqual([['', 30]]);
    expect(pick(extractSamples({ memory: { used_bytes: 1, total_bytes: 0 } }), 'memory_used_percent')).toEqual([]);
  });

  it('skips missing, non-numeric and non-finite fields and unlabelled items without failing', () => {
    const samples = extractSamples({
      cpu: { usage_percent: '17.4' },
      memory: 'lots',
      uptime_seconds: null,
      disks: [{ mount: '/', used_percent: 'full', used_bytes: 5 }, { used_percent: 3 }, 'sda', null],
      network: { interfaces: { name: 'igc0' } },
      gateways: [{ name: '', rtt_ms: 1 }, { name: 'WAN', rtt_ms: Number.NaN, loss_percent: 0 }],
    });
    expect(samples).toEqual([
      { metric: 'disk_used_bytes', label: '/', value: 5 },
      { metric: 'gateway_loss_percent', label: 'WAN', value: 0 },
    ]);
    expect(extractSamples({})).toEqual([]);
  });

  it('keeps at most MAX_SAMPLES_PER_HEARTBEAT samples, the first in document order', () => {
    const interfaces = Array.from({ length: 1500 }, (_, i) => ({ name: `vlan${i}`, rx_bytes: i, tx_bytes: i }));
    const samples = extractSamples({ cpu: { usage_percent: 1 }, network: { interfaces } });
    expect(samples).toHaveLength(MAX_SAMPLES_PER_HEARTBEAT);
    expect(samples[0]).toEqual({ metric: 'cpu_usage', label: '', value: 1 });
    expect(samples.at(-1)!.label).toBe(`vlan${(MAX_SAMPLES_PER_HEARTBEAT - 2) / 2}`);
  });
});
