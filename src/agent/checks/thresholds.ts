// Thresholds of the built-in checks and the Nagios-style text of their results. A threshold is reached
// when the value is at it or beyond (a disk at exactly crit_percent is critical); a threshold that is
// absent is never reached, as check-protocol.ts says.
import type { CheckStateCode, Perfdata } from '../../modules/checks/check-protocol.js';
import { CRITICAL, OK, STATE_WORDS, WARNING, type CheckOutcome } from './nagios-output.js';

/** The state of a value where more is worse (time, loss, used percent). */
export function levelAbove(value: number, warn?: number, crit?: number): CheckStateCode {
  if (crit !== undefined && value >= crit) return CRITICAL;
  if (warn !== undefined && value >= warn) return WARNING;
  return OK;
}

/** The state of a value where less is worse (certificate days left). */
export function levelBelow(value: number, warn?: number, crit?: number): CheckStateCode {
  if (crit !== undefined && value <= crit) return CRITICAL;
  if (warn !== undefined && value <= warn) return WARNING;
  return OK;
}

export const worst = (...states: CheckStateCode[]): CheckStateCode => Math.max(...states) as CheckStateCode;

/** `TCP OK - 0.002 s to 127.0.0.1:8080`: the check's word, the state's word, the text. */
export function outcome(word: string, state: CheckStateCode, text: string, perfdata: Perfdata[] = []): CheckOutcome {
  return { state, output: `${word} ${STATE_WORDS[state]} - ${text}`, perfdata };
}

/** A perfdata item; thresholds are given in the item's unit, absent ones left out. */
export function perf(label: string, value: number, uom: string, extra: { warn?: number | undefined; crit?: number | undefined; min?: number; max?: number } = {}): Perfdata {
  const item: Perfdata = { label, value: round(value), uom };
  if (extra.warn !== undefined) item.warn = String(round(extra.warn));
  if (extra.crit !== undefined) item.crit = String(round(extra.crit));
  if (extra.min !== undefined) item.min = extra.min;
  if (extra.max !== undefined) item.max = extra.max;
  return item;
}

/** Six significant decimals are plenty for seconds and percent, and keep the frames short. */
const round = (n: number) => Math.round(n * 1e6) / 1e6;

export const seconds = (ms: number) => (ms / 1000).toFixed(3);
export const msToS = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
