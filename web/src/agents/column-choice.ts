// Which columns of the agents table are shown (issue 57: at 1366 px platform, primary IP and uptime were
// hidden with no way to show them). Each column has a default for the window's width (agent-columns.tsx:
// `medium` columns from 1500 px, `wide` ones from 700 px, the rest always); a technician's choice for a
// column overrides its default at every width and is remembered in this browser (localStorage: a
// preference of the device, not of the account, and nothing secret). "Default columns" forgets them.
import { useCallback, useState, useSyncExternalStore } from 'react';
import { AGENT_COLUMNS, type AgentColumn } from './agent-columns';

const STORAGE_KEY = 'rmm.agents.columns';
const PHONE = '(max-width: 700px)';
const LAPTOP = '(max-width: 1500px)';

export type Width = 'phone' | 'laptop' | 'wide';
type Choices = Readonly<Record<string, boolean>>;

function subscribeWidth(onChange: () => void): () => void {
  const queries = [PHONE, LAPTOP].map((q) => window.matchMedia(q));
  for (const q of queries) q.addEventListener('change', onChange);
  return () => queries.forEach((q) => q.removeEventListener('change', onChange));
}

function currentWidth(): Width {
  if (window.matchMedia(PHONE).matches) return 'phone';
  return window.matchMedia(LAPTOP).matches ? 'laptop' : 'wide';
}

/** Whether a column shows at this width when nobody has chosen. */
export function shownByDefault(column: AgentColumn, width: Width): boolean {
  if (width === 'phone') return !column.wide;
  if (width === 'laptop') return !column.medium;
  return true;
}

/** The stored choices, keeping only known columns with true or false (the store is the user's to edit). */
function readChoices(): Choices {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '{}');
    if (typeof parsed !== 'object' || parsed === null) return {};
    const known = new Set(AGENT_COLUMNS.map((c) => c.id));
    return Object.fromEntries(Object.entries(parsed).filter(([id, shown]) => known.has(id) && typeof shown === 'boolean'));
  } catch {
    return {};
  }
}

function writeChoices(choices: Choices): void {
  try {
    if (Object.keys(choices).length === 0) localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, JSON.stringify(choices));
  } catch {
    // Storage full or refused (a private window): the choice holds until the page is left.
  }
}

export interface ColumnChoice {
  width: Width;
  /** The columns to show, in the table's order. */
  shown: readonly AgentColumn[];
  isShown(column: AgentColumn): boolean;
  choose(column: AgentColumn, shown: boolean): void;
  /** Back to the defaults of every width. */
  reset(): void;
  /** Whether any column differs from its default by choice. */
  chosen: boolean;
}

export function useColumnChoice(): ColumnChoice {
  const width = useSyncExternalStore(subscribeWidth, currentWidth);
  const [choices, setChoices] = useState<Choices>(readChoices);
  const update = useCallback((next: Choices) => {
    writeChoices(next);
    setChoices(next);
  }, []);
  const isShown = (column: AgentColumn) => column.id === 'name' || (choices[column.id] ?? shownByDefault(column, width));
  return {
    width,
    shown: AGENT_COLUMNS.filter(isShown),
    isShown,
    // Choosing what this width shows anyway forgets the choice, so the column follows the defaults again
    // (unticking and ticking a column back leaves no trace on the other widths).
    choose: (column, shown) => {
      const { [column.id]: _old, ...others } = choices;
      update(shown === shownByDefault(column, width) ? others : { ...others, [column.id]: shown });
    },
    reset: () => update({}),
    chosen: Object.keys(choices).length > 0,
  };
}
