// datetime-local inputs and the API's RFC 3339 UTC times: the filters read the browser's local time, the
// maintenance windows are entered in UTC (as the server keeps them), and both convert here.
const pad = (n: number) => String(n).padStart(2, '0');

/** A Date as a datetime-local value ("2025-05-01T14:30"), in the browser's time zone. */
export function localInputValue(date: Date): string {
  if (Number.isNaN(date.getTime())) return '';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A datetime-local value read as local time, as RFC 3339 UTC. */
export function localToIso(local: string): string {
  const date = new Date(local);
  if (Number.isNaN(date.getTime())) throw new Error('Enter a date and a time.');
  return date.toISOString();
}

/** An RFC 3339 time as a datetime-local value in UTC ("2025-05-01T12:30"). */
export function utcInputValue(iso: string | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString().slice(0, 16);
}

/** A datetime-local value read as UTC, as RFC 3339 ("2025-05-01T12:30:00.000Z"), or undefined when empty or invalid. */
export function utcInputToIso(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(`${value.length === 16 ? `${value}:00` : value}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
