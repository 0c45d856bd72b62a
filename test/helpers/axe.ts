// Accessibility checks in the browser with axe-core (issue 57): its rules run on the page as shown, and a
// test asserts that nothing serious or critical is left. The console's CSP allows no inline script, so
// axe is not added as a <script>: its source goes through page.evaluate, which the page's CSP does not
// govern (it runs in the page's world through the DevTools protocol, like the test's own reads).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export type AxeImpact = 'minor' | 'moderate' | 'serious' | 'critical';

export interface AxeViolation {
  id: string;
  impact: AxeImpact | null;
  help: string;
  /** Each offending element: its CSS path and axe's summary of what is wrong. */
  nodes: Array<{ target: string; summary: string }>;
}

/** What a user of assistive technology or with low vision cannot get past: the bar of every console page. */
export const BLOCKING: readonly AxeImpact[] = ['serious', 'critical'];

/**
 * axe's violations on the page as it is now (WCAG 2.x A and AA rules and axe's best practices, the set the
 * issue's audit used), optionally only those of the given impacts. Injects axe once per document.
 */
export async function axeViolations(page: Page, impacts?: readonly AxeImpact[]): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
  const json = (await page.evaluate(String.raw`axe.run(document, { resultTypes: ['violations'] }).then((r) => JSON.stringify(r.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: (n.failureSummary || '').replace(/\s+/g, ' ').trim() })),
  }))))`)) as string;
  const all = JSON.parse(json) as AxeViolation[];
  return impacts ? all.filter((v) => v.impact !== null && impacts.includes(v.impact)) : all;
}

/** One line per offending element, to read in a failed assertion: "rule (impact) target: summary". */
export function describeViolations(violations: readonly AxeViolation[]): string[] {
  return violations.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact ?? 'n/a'}) ${n.target}: ${n.summary.slice(0, 200)}`));
}
