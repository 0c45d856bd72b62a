// Reading and typing into an xterm.js terminal in a console page (the server terminal, an agent's
// Shell tab): xterm's DOM renderer draws each row as an element, so the screen is read as text.
import type { Page } from 'playwright-core';
import { expect, vi } from 'vitest';

/** The terminal's screen as text, one string per row. */
export async function screenRows(page: Page): Promise<string[]> {
  const rows = (await page.evaluate(`Array.from(document.querySelectorAll('.xterm-rows > div'), (row) => row.textContent)`)) as string[];
  return rows.map((row) => row.replace(/\u00a0/g, ' ').trimEnd());
}

/** Types a command into the terminal and waits for a row that `answered` accepts. */
export async function typeCommand(page: Page, command: string, answered: (row: string) => boolean): Promise<string> {
  await page.locator('.xterm-screen').click();
  await page.keyboard.type(command);
  await page.keyboard.press('Enter');
  let found = '';
  await vi.waitFor(
    async () => {
      found = (await screenRows(page)).find(answered) ?? '';
      expect(found, (await screenRows(page)).join('\n')).not.toBe('');
    },
    { timeout: 15_000, interval: 100 },
  );
  return found;
}

/** A `stty size` answer: "rows cols". */
export const isSttySize = (row: string): boolean => /^\d+ \d+$/.test(row);
