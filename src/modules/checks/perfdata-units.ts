// Perfdata values in base units, so one series keeps one unit whatever a plugin prints: times in
// seconds, sizes in bytes (KB, MB, GB, TB as powers of 1024, as check_disk means them). Percentages,
// counters (c) and unit-less values stay as they are.
const FACTORS: Record<string, number> = {
  s: 1,
  ms: 1e-3,
  us: 1e-6,
  b: 1,
  kb: 1024,
  mb: 1024 ** 2,
  gb: 1024 ** 3,
  tb: 1024 ** 4,
};

export function baseValue(value: number, uom: string): number {
  return value * (FACTORS[uom.toLowerCase()] ?? 1);
}

/** The unit a series of this perfdata unit is kept in. */
export function baseUnit(uom: string): string {
  const u = uom.toLowerCase();
  if (u === 's' || u === 'ms' || u === 'us') return 's';
  if (u in FACTORS) return 'B';
  return uom;
}
