// How notifications name a metric and its values: "Disk used on /var is 93.1 %" reads better to the
// technician on call than "disk_used_percent{/var} = 93.12345".
import type { MetricName } from '../metrics/extract-samples.js';

const WORDS: Record<MetricName, { name: string; labelWord?: string; unit: 'percent' | 'bytes' | 'ms' | 'seconds' | 'plain' }> = {
  cpu_usage: { name: 'CPU usage', unit: 'percent' },
  memory_used_percent: { name: 'Memory used', unit: 'percent' },
  memory_used_bytes: { name: 'Memory used', unit: 'bytes' },
  memory_total_bytes: { name: 'Memory total', unit: 'bytes' },
  uptime_seconds: { name: 'Uptime', unit: 'seconds' },
  disk_used_percent: { name: 'Disk used', labelWord: 'on', unit: 'percent' },
  disk_used_bytes: { name: 'Disk used', labelWord: 'on', unit: 'bytes' },
  interface_rx_bytes: { name: 'Bytes received', labelWord: 'on interface', unit: 'bytes' },
  interface_tx_bytes: { name: 'Bytes sent', labelWord: 'on interface', unit: 'bytes' },
  gateway_rtt_ms: { name: 'Round-trip time', labelWord: 'to gateway', unit: 'ms' },
  gateway_loss_percent: { name: 'Packet loss', labelWord: 'to gateway', unit: 'percent' },
  // Perfdata comes in its plugin's unit (made base: s, B), which the metric's name cannot say.
  check_perf: { name: 'Check value', labelWord: 'of', unit: 'plain' },
};

const round = (n: number, digits = 1) => String(Math.round(n * 10 ** digits) / 10 ** digits);

const FORMAT = {
  percent: (v: number) => `${round(v)} %`,
  ms: (v: number) => `${round(v)} ms`,
  seconds: (v: number) => `${round(v, 0)} s`,
  plain: (v: number) => round(v, 3),
  bytes: (v: number) => {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    let x = v;
    while (Math.abs(x) >= 1024 && i < units.length - 1) {
      x /= 1024;
      i++;
    }
    return `${round(x)} ${units[i]}`;
  },
};

export function describeMetric(metric: MetricName, label: string): { name: string; format: (v: number) => string } {
  const w = WORDS[metric];
  return { name: label && w.labelWord ? `${w.name} ${w.labelWord} ${label}` : w.name, format: FORMAT[w.unit] };
}
