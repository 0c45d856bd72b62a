// The browser tab's title names the page, most specific first ("demo-1 · Backups · RMM"): with several
// tabs open, "RMM console" on each said nothing (issue 33).
import { useEffect } from 'react';

export function pageTitle(...parts: ReadonlyArray<string | null | undefined>): string {
  return [...parts.filter((p): p is string => !!p), 'RMM'].join(' · ');
}

/** Sets the document title while the page shows; `parts` without the product name. */
export function usePageTitle(...parts: ReadonlyArray<string | null | undefined>): void {
  const title = pageTitle(...parts);
  useEffect(() => {
    document.title = title;
  }, [title]);
}
