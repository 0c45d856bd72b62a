// Numeric-aware version order (contract §9: "the highest version"): digit runs compare as numbers, so
// 1.10 > 1.9 and 2.0.0 > 1.99; other characters compare case-insensitively. A pre-release suffix sorts
// after its release (1.0-rc1 > 1.0), which is why firmware versions should not use one.
const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

export function compareVersions(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** `^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$` (contract §9): safe in a file name and a header. */
export const VERSION_PATTERN = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;
