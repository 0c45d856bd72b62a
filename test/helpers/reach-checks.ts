// Can a user reach every action on the page as shown without scrolling the page sideways (issue 57)?
// Checked in the browser:
// - the page itself does not scroll sideways;
// - every visible button (and link styled as one) of the page's content, and every tab of a tab strip,
//   lies whole inside the window and inside every frame that clips it (a table's scrolling frame, a
//   tab strip), so no swipe inside a frame is needed to find it; or, where a strip does scroll, the strip
//   shows a visible hint that more lies that way (an element with `data-scroll-hint` that is shown).
// A hidden element that sticks out (a visually hidden table header outside its frame) counts too: it
// widens the page, which the first check catches.
import type { Page } from 'playwright-core';

export async function unreachable(page: Page): Promise<string[]> {
  // Sent as text: this project's TypeScript has no DOM types outside web/.
  return (await page.evaluate(`(${CHECKS})()`)) as string[];
}

const CHECKS = String.raw`() => {
  const problems = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > window.innerWidth + 1) problems.push('the page scrolls sideways: ' + doc.scrollWidth + ' px wide at ' + window.innerWidth + ' px');
  const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const clips = (el) => /(auto|scroll|hidden|clip)/.test(getComputedStyle(el).overflowX);
  const hinted = (frame) => [...frame.parentElement.querySelectorAll('[data-scroll-hint]')].some((h) => shown(h) && h.closest('[data-scroll-hint]') === h);
  const label = (el) => (el.getAttribute('aria-label') || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 40);
  const targets = document.querySelectorAll('main button, main a.button, main .tabs a, main [role="tab"]');
  for (const el of targets) {
    if (!shown(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0) continue;
    let problem = null;
    if (r.left < -1 || r.right > window.innerWidth + 1) problem = 'outside the window (' + Math.round(r.left) + '..' + Math.round(r.right) + ' px)';
    for (let frame = el.parentElement; frame && !problem; frame = frame.parentElement) {
      if (!clips(frame)) continue;
      const f = frame.getBoundingClientRect();
      if (r.left < f.left - 1 || r.right > f.right + 1) {
        problem = hinted(frame) ? null : 'cut off by its frame with no hint that it scrolls';
        break;
      }
    }
    if (problem) problems.push('"' + label(el) + '" ' + problem);
  }
  return problems;
}`;
