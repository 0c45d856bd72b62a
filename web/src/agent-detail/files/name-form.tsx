// A one-field form for a name on the device: a new folder's, or a file's new name. Names are plain
// names (no separator, not `.` or `..`): moving between directories is not what these forms do.
import { useState } from 'react';
import { useSubmit } from '../../ui/use-submit';
import { ErrorBanner } from '../../ui/widgets';

export function validName(name: string): string | null {
  if (!name.trim()) return 'Enter a name.';
  if (/[/\\\0]/.test(name) || name === '.' || name === '..') return 'A name cannot contain / or \\, nor be . or ..';
  return null;
}

export function NameForm({ label, initial = '', submitLabel, onSubmit, onCancel }: { label: string; initial?: string; submitLabel: string; onSubmit: (name: string) => Promise<void>; onCancel: () => void }) {
  const [name, setName] = useState(initial);
  const { busy, error, setError, submit } = useSubmit(async () => {
    const invalid = validName(name);
    if (invalid) throw new Error(invalid);
    await onSubmit(name);
  });
  return (
    <form className="name-form" aria-label={label} onSubmit={(e) => void submit(e)}>
      <label>
        {label}
        <input
          value={name}
          autoFocus
          onChange={(e) => {
            setName(e.target.value);
            setError(undefined);
          }}
          onKeyDown={(e) => e.key === 'Escape' && onCancel()}
          maxLength={255}
        />
      </label>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? `${submitLabel}…` : submitLabel}
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      <ErrorBanner error={error} />
    </form>
  );
}
