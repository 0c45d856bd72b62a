// One upload at a time per form: its progress (sent bytes, then the wait while the server hashes and
// stores), the server's answer or error, and a way to cancel. The firmware and installer forms share it.
import { useEffect, useRef, useState } from 'react';
import { uploadWithProgress, type UploadRequest } from './transfer';

export interface Upload<T> {
  busy: boolean;
  /** 0 to 1 while sending; undefined before the first upload. */
  fraction: number | undefined;
  error: unknown;
  result: T | undefined;
  start: (request: Omit<UploadRequest, 'onProgress' | 'signal'>) => Promise<T | undefined>;
  cancel: () => void;
}

export function useUpload<T>(): Upload<T> {
  const [busy, setBusy] = useState(false);
  const [fraction, setFraction] = useState<number>();
  const [error, setError] = useState<unknown>();
  const [result, setResult] = useState<T>();
  const controller = useRef<AbortController | null>(null);
  // Leaving the page stops the upload rather than letting it finish unseen.
  useEffect(() => () => controller.current?.abort(), []);

  const start = async (request: Omit<UploadRequest, 'onProgress' | 'signal'>) => {
    controller.current?.abort();
    const current = new AbortController();
    controller.current = current;
    setBusy(true);
    setError(undefined);
    setResult(undefined);
    setFraction(0);
    try {
      const answer = await uploadWithProgress<T>({ ...request, onProgress: setFraction, signal: current.signal });
      setResult(answer);
      return answer;
    } catch (err) {
      setError(current.signal.aborted ? new Error('The upload was cancelled; nothing was stored.') : err);
      return undefined;
    } finally {
      if (controller.current === current) {
        controller.current = null;
        setBusy(false);
      }
    }
  };
  return { busy, fraction, error, result, start, cancel: () => controller.current?.abort() };
}

export function UploadProgress({ upload, testId }: { upload: Upload<unknown>; testId: string }) {
  if (upload.fraction === undefined) return null;
  const percent = Math.round(upload.fraction * 100);
  return (
    <div className="upload-progress">
      <progress data-testid={testId} max={100} value={percent} aria-label="Upload progress">
        {percent} %
      </progress>
      <span className="mono upload-percent">{percent} %</span>
      {upload.busy && percent === 100 && <span className="muted">Sent; the server is checking and storing it…</span>}
      {upload.busy && (
        <button type="button" onClick={upload.cancel}>
          Cancel
        </button>
      )}
    </div>
  );
}
