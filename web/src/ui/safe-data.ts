// Readers for agent-supplied system data. An agent is not trusted: any field may be missing, of another
// type or hostile, so panels read through these and get a safe default instead of a crash. (React
// renders strings as text, so a hostile string is shown, never interpreted.)
export type Obj = Record<string, unknown>;

export function obj(value: unknown): Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : {};
}

export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Objects of an array, others dropped. */
export function objs(value: unknown): Obj[] {
  return arr(value).filter((v): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v));
}

export function str(value: unknown, fallback = ''): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return fallback;
}

export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function bool(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

/** A path such as "hypervisor.guests" into nested objects. */
export function at(value: unknown, path: string): unknown {
  let current: unknown = value;
  for (const key of path.split('.')) current = obj(current)[key];
  return current;
}
