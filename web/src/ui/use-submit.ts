// A form's submit: busy while the request runs, the error kept for the form to show, and the fields
// left as typed when it fails (the action clears them itself on success).
import { useState, type FormEvent } from 'react';

export function useSubmit(action: () => Promise<void>): {
  busy: boolean;
  error: unknown;
  setError: (error: unknown) => void;
  submit: (event?: FormEvent) => Promise<void>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, submit };
}
