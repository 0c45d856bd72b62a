// Loads data for a page and, when asked, refreshes it on a timer while the tab is visible; a refresh that
// fell due while the tab was hidden runs as soon as it is shown again, so a technician coming back to the
// tab sees fresh data at once. The previous data stays on screen during a refresh, so lists do not flicker.
import { useCallback, useEffect, useRef, useState } from 'react';

export interface Resource<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
  /** Changes the data in place until the next load (a page appended by "Load more"). */
  update: (change: (previous: T | undefined) => T | undefined) => void;
}

export function useResource<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[], options: { refreshMs?: number } = {}): Resource<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Error>();
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      setLoading(true);
      try {
        const value = await loadRef.current(controller.signal);
        if (controller.signal.aborted) return;
        setData(value);
        setError(undefined);
      } catch (err) {
        if (controller.signal.aborted) return;
        setError(err as Error);
      } finally {
        if (!controller.signal.aborted) setLoading(false);
      }
      if (options.refreshMs && !controller.signal.aborted) timer = setTimeout(tick, options.refreshMs);
    };
    /** A refresh fell due while the tab was hidden: it waits for the tab instead of polling. */
    let dueWhileHidden = false;
    const tick = () => {
      if (document.visibilityState === 'hidden') dueWhileHidden = true;
      else void run();
    };
    const onVisibility = () => {
      if (!dueWhileHidden || document.visibilityState === 'hidden') return;
      dueWhileHidden = false;
      void run();
    };
    document.addEventListener('visibilitychange', onVisibility);
    void run();
    return () => {
      controller.abort();
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [...deps, generation, options.refreshMs]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data, error, loading, reload, update: setData };
}
