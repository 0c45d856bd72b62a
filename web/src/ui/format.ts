// Number and time formatting shared by the pages.
export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function formatBits(bitsPerSecond: number | undefined): string {
  if (bitsPerSecond === undefined) return '–';
  const units = ['bit/s', 'kbit/s', 'Mbit/s', 'Gbit/s', 'Tbit/s'];
  let value = bitsPerSecond;
  let unit = 0;
  while (Math.abs(value) >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function formatPercent(value: number | undefined): string {
  return value === undefined ? '–' : `${value.toFixed(1)} %`;
}

export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined) return '–';
  const days = Math.floor(seconds / 86400);
  const hours = Math.floor((seconds % 86400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${minutes} min`;
  return `${minutes} min`;
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** "3 min ago", "in 2 h", "just now". */
export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 10) return 'just now';
  const [value, unit] =
    abs < 60 ? [abs, 's'] : abs < 3600 ? [Math.floor(abs / 60), 'min'] : abs < 86400 ? [Math.floor(abs / 3600), 'h'] : [Math.floor(abs / 86400), 'd'];
  return seconds < 0 ? `${value} ${unit} ago` : `in ${value} ${unit}`;
}

/**
 * Whole days from `now` until `iso` (negative once past), or undefined without a valid date. Computed
 * from the date itself: an agent's own count (a certificate's `days_remaining`) was seen 20 days off.
 */
export function daysUntil(iso: string | undefined, now = Date.now()): number | undefined {
  const at = iso ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.floor((at - now) / 86_400_000);
}
