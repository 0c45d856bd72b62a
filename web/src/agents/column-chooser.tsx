// The agents list's column chooser: a "Columns" button that opens a panel of labelled checkboxes, one
// per column (the name always stays: it is the link to the agent), and "Default columns". The panel is
// part of the page's flow, under the filters, so it never hangs past a phone's edge; Escape closes it
// and returns to the button.
import { useId, useRef, useState, type KeyboardEvent } from 'react';
import { AGENT_COLUMNS } from './agent-columns';
import type { ColumnChoice } from './column-choice';

export function useColumnChooser() {
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const buttonRef = useRef<HTMLButtonElement>(null);
  const close = () => {
    setOpen(false);
    buttonRef.current?.focus();
  };
  const button = (
    <button type="button" ref={buttonRef} aria-expanded={open} aria-controls={panelId} onClick={() => setOpen((o) => !o)} data-testid="columns-button">
      Columns
    </button>
  );
  return { open, panelId, close, button };
}

export function ColumnChooserPanel({ id, choice, onClose }: { id: string; choice: ColumnChoice; onClose: () => void }) {
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Escape') onClose();
  };
  return (
    <fieldset id={id} className="card column-chooser" onKeyDown={onKeyDown}>
      <legend>Columns shown</legend>
      <div className="column-choices">
        {AGENT_COLUMNS.map((c) => (
          <label key={c.id} className="inline">
            <input type="checkbox" checked={choice.isShown(c)} disabled={c.id === 'name'} onChange={(e) => choice.choose(c, e.target.checked)} />
            {c.label}
          </label>
        ))}
      </div>
      <p className="muted column-chooser-note">
        Remembered in this browser. Without a choice a column follows the window: platform, primary IP and uptime from 1500 px, most
        columns from 700 px. The CSV export always has every column.
      </p>
      <div className="row">
        <button type="button" onClick={choice.reset} disabled={!choice.chosen}>
          Default columns
        </button>
        <button type="button" onClick={onClose}>
          Done
        </button>
      </div>
    </fieldset>
  );
}
