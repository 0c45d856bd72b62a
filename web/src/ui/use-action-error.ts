// For lists whose rows have actions (delete, download): a failed action is reported once above the
// list, and the next attempt clears it.
import { useState } from 'react';

export function useActionError(): { error: unknown; guard: (action: () => Promise<void>) => Promise<void> } {
  const [error, setError] = useState<unknown>();
  const guard = async (action: () => Promise<void>) => {
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(err);
    }
  };
  return { error, guard };
}
