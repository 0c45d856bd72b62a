// The filters' times: the URL keeps UTC (what the API takes, and a shared link means the same moment
// everywhere); the datetime-local inputs show the viewer's local time.

/** "2026-05-01T14:30" (local) → "2026-05-01T12:30:00.000Z". `endOfMinute` makes a "to" inclusive of
 * the whole minute shown, since the input has no seconds. */
export function localToUtc(local: string, endOfMinute = false): string | undefined {
  if (!local) return undefined;
  const date = new Date(local); // A date-time without offset is read as local time.
  if (Number.isNaN(date.getTime())) return undefined;
  return new Date(date.getTime() + (endOfMinute ? 59_999 : 0)).toISOString();
}

/** The inverse, for the input's value; an unreadable URL value shows as empty. */
export function utcToLocal(iso: string | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
