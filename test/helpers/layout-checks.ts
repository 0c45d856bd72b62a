// What a user calls a broken layout, checked in the browser on the page as shown (issue 33):
// - a cut-off cell: at desktop width (≥ 1000 px) a table that does not fit its frame (the frame
//   scrolls, so a column sits past the card's edge); on a phone a wide table may scroll in its frame,
//   but on the pages asked for (`buttonsInView`) a button in it (a guest's Start/Stop) must be in view
//   without scrolling sideways;
// - a navigation link off the screen (the phone's navigation stopped after "Firmware");
// - a short word broken across two lines (a name split mid-word): words of up to 20 characters in
//   headings, links and table or fact cells stay whole. Longer ones (hashes, ids) may break.
import type { Page } from 'playwright-core';

export async function layoutProblems(page: Page, { buttonsInView }: { buttonsInView: boolean }): Promise<string[]> {
  // Sent as text: this project's TypeScript has no DOM types outside web/.
  return (await page.evaluate(`(${CHECKS})(${JSON.stringify(buttonsInView)})`)) as string[];
}

const CHECKS = String.raw`(buttonsInView) => {
  const problems = [];
  const desktop = window.innerWidth >= 1000;
  const shown = (el) => el.offsetParent !== null || getComputedStyle(el).position === 'fixed';
  const where = (el) => {
    const panel = el.closest('section[aria-label], .card, form[aria-label]');
    const heading = (panel && (panel.getAttribute('aria-label') || (panel.querySelector('h2, h3') || {}).textContent)) || '';
    const table = el.querySelector('table') || el.closest('table');
    return (heading || (table && table.getAttribute('data-testid')) || 'a table').trim().slice(0, 60);
  };

  for (const frame of document.querySelectorAll('main .table-wrap')) {
    if (!shown(frame)) continue;
    const over = frame.scrollWidth - frame.clientWidth;
    if (over <= 1) continue;
    if (desktop) {
      problems.push(where(frame) + ': table cut off by ' + over + ' px at ' + window.innerWidth + ' px');
      continue;
    }
    if (!buttonsInView) continue;
    const box = frame.getBoundingClientRect();
    const hidden = [...frame.querySelectorAll('button')].find((b) => shown(b) && b.getBoundingClientRect().right > box.right + 1);
    if (hidden) problems.push(where(frame) + ': "' + hidden.textContent.trim() + '" needs sideways scrolling');
  }

  for (const link of document.querySelectorAll('header nav a')) {
    const r = link.getBoundingClientRect();
    if (!shown(link) || r.right > window.innerWidth + 1 || r.left < -1 || r.width === 0) problems.push('navigation link "' + link.textContent.trim() + '" is off the screen');
  }

  const walker = document.createTreeWalker(document.querySelector('main') || document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || !shown(parent) || !parent.closest('h1, h2, h3, a, td, dd, .badge')) continue;
    if (parent.closest('pre, code, .mono, textarea, input, select')) continue;
    const text = node.textContent || '';
    // Break opportunities a browser takes without overflow-wrap: spaces, hyphens, slashes.
    for (const match of text.matchAll(/[^\s\-/]{2,20}/g)) {
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      if (tops.size > 1) {
        problems.push('"' + match[0] + '" is broken across lines');
        break;
      }
    }
  }
  return problems;
}`;
