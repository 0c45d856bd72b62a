// CSV as RFC 4180 writes it (fields with a comma, quote or line break quoted, quotes doubled, CRLF
// between records), made safe to open in a spreadsheet: a cell an attacker controls (an agent's name,
// a tag, a note) that starts with = + - @ (or a tab or carriage return) would run as a formula, so it is
// prefixed with a single quote, which spreadsheets show as text (OWASP "CSV injection").
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The header and the rows, with a byte order mark so spreadsheets read UTF-8 (umlauts) correctly. */
export function toCsv(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  return `\ufeff${[header, ...rows].map((row) => row.map(csvCell).join(',')).join('\r\n')}\r\n`;
}
