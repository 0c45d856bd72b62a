// The end of a create-or-edit form: save (busy while the request runs), cancel, and the save's error
// below them, where the eye is after clicking.
import { ErrorBanner } from './widgets';

export function FormFooter({ busy, error, submitLabel, onCancel }: { busy: boolean; error: unknown; submitLabel: string; onCancel: () => void }) {
  return (
    <>
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : submitLabel}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
      <ErrorBanner error={error} />
    </>
  );
}
