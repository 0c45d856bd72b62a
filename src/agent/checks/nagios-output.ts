// Checks on the device (issue 61), agent side: this folder runs the checks of the set the server sends
// (`checks_set`), schedules them and reports their results (`check_results`); see check-protocol.ts.
//
// This file reads a plugin's output by the Nagios plugin convention: the exit code is the state, the
// text before the first `|` (and the lines after it) is the output, and what follows a `|` is perfdata.
// Long output may carry perfdata too: from the first `|` on a later line, the rest of that line and all
// following lines are perfdata (Nagios plugin guidelines, "Plugin Output for Nagios").
import { MAX_CHECK_OUTPUT_CHARS, MAX_PERFDATA_ITEMS, type CheckStateCode, type Perfdata } from '../../modules/checks/check-protocol.js';

export interface CheckOutcome {
  state: CheckStateCode;
  output: string;
  perfdata: Perfdata[];
}

export const OK = 0;
export const WARNING = 1;
export const CRITICAL = 2;
export const UNKNOWN = 3;

export const STATE_WORDS = ['OK', 'WARNING', 'CRITICAL', 'UNKNOWN'] as const;

/** Exit 0..3 are the plugin's state; any other code, and death by a signal (code null), is UNKNOWN. */
export function stateOfExit(code: number | null): CheckStateCode {
  return code === 0 || code === 1 || code === 2 || code === 3 ? code : UNKNOWN;
}

/** Cuts a text at MAX_CHECK_OUTPUT_CHARS, ending it with a mark so the reader knows there was more. */
export function cutOutput(text: string, max = MAX_CHECK_OUTPUT_CHARS): string {
  if (text.length <= max) return text;
  const mark = '… (output cut)';
  return text.slice(0, max - mark.length) + mark;
}

/** Splits a plugin's stdout into its text and perfdata; `code` is its exit code (null: killed by a signal). */
export function parsePluginOutput(stdout: string, code: number | null): CheckOutcome {
  const lines = stdout.replace(/\r\n/g, '\n').replace(/\n+$/, '').split('\n');
  const text: string[] = [];
  const perf: string[] = [];
  const [first = '', ...rest] = lines;
  const bar = first.indexOf('|');
  text.push((bar === -1 ? first : first.slice(0, bar)).trim());
  if (bar !== -1) perf.push(first.slice(bar + 1));
  let inPerf = false;
  for (const line of rest) {
    if (inPerf) {
      perf.push(line);
      continue;
    }
    const at = line.indexOf('|');
    if (at === -1) {
      text.push(line);
      continue;
    }
    text.push(line.slice(0, at));
    perf.push(line.slice(at + 1));
    inPerf = true;
  }
  const output = text.join('\n').trimEnd();
  return { state: stateOfExit(code), output: cutOutput(output), perfdata: parsePerfdata(perf.join(' ')) };
}

// value[UOM]: a number (with exponent), then letters or % as unit; "U" is an undetermined value.
const VALUE = /^([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)([a-zA-Z%]*)$/;
const NUMBER = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?/;

/** Items of a perfdata text, at most MAX_PERFDATA_ITEMS; malformed and unknown ("U") items are skipped. */
export function parsePerfdata(text: string): Perfdata[] {
  const items: Perfdata[] = [];
  let i = 0;
  while (i < text.length && items.length < MAX_PERFDATA_ITEMS) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    // The label: quoted ('' stands for one quote; spaces and = allowed), or up to the first =.
    let label = '';
    if (text[i] === "'") {
      i++;
      while (i < text.length) {
        if (text[i] === "'") {
          if (text[i + 1] === "'") {
            label += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        label += text[i++];
      }
      if (text[i] !== '=') {
        i = skipToken(text, i);
        continue;
      }
    } else {
      const start = i;
      while (i < text.length && text[i] !== '=' && !/\s/.test(text[i]!)) i++;
      label = text.slice(start, i);
      if (text[i] !== '=') continue; // a word that is not an item
    }
    i++; // the =
    const start = i;
    i = skipToken(text, i);
    const item = perfItem(label, text.slice(start, i));
    if (item) items.push(item);
  }
  return items;
}

function skipToken(text: string, i: number): number {
  while (i < text.length && !/\s/.test(text[i]!)) i++;
  return i;
}

function perfItem(rawLabel: string, spec: string): Perfdata | null {
  const label = rawLabel.slice(0, 128);
  if (!label) return null;
  const [value = '', warn = '', crit = '', min = '', max = ''] = spec.split(';');
  const match = VALUE.exec(value);
  if (!match) return null; // "U" (unknown) or not a number
  const number = Number(match[1]);
  if (!Number.isFinite(number)) return null;
  const item: Perfdata = { label, value: number, uom: match[2]!.slice(0, 8) };
  if (warn) item.warn = warn.slice(0, 64);
  if (crit) item.crit = crit.slice(0, 64);
  const minimum = limit(min);
  const maximum = limit(max);
  if (minimum !== undefined) item.min = minimum;
  if (maximum !== undefined) item.max = maximum;
  return item;
}

/** min and max are plain numbers; some plugins repeat the unit there, which is dropped. */
function limit(text: string): number | undefined {
  const match = NUMBER.exec(text);
  const value = match ? Number(match[0]) : NaN;
  return Number.isFinite(value) ? value : undefined;
}
