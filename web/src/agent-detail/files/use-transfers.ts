// The Files tab's uploads and downloads while they run and after: each with its phase, progress and a
// cancel, the result (or the server's reason) kept until dismissed. Uploads run one after another, so a
// dropped folder's worth of files does not hash all at once; downloads start at once (each is a click).
import { useCallback, useRef, useState } from 'react';
import { errorText } from '../../ui/widgets';
import { joinPath } from './device-path';
import { Cancelled, downloadFile, uploadFile, type Progress } from './transfer-io';

export type TransferPhase = Parameters<Progress>[0] | 'waiting' | 'done' | 'failed' | 'cancelled';

export interface Transfer {
  id: number;
  kind: 'upload' | 'download';
  name: string;
  phase: TransferPhase;
  done: number;
  total: number | null;
  /** The failure's reason. */
  message?: string;
  cancel: () => void;
}

export function useTransfers(agentId: string, onUploaded: () => void) {
  const [transfers, setTransfers] = useState<Transfer[]>([]);
  const nextId = useRef(1);
  const queue = useRef<Promise<void>>(Promise.resolve());

  const change = useCallback((id: number, patch: Partial<Transfer>) => setTransfers((list) => list.map((t) => (t.id === id ? { ...t, ...patch } : t))), []);

  /** Adds a transfer and runs `work` (now, or after the uploads before it); its end is shown. */
  const start = useCallback(
    (kind: Transfer['kind'], name: string, total: number | null, work: (progress: Progress, signal: AbortSignal) => Promise<void>) => {
      const id = nextId.current++;
      const controller = new AbortController();
      setTransfers((list) => [...list, { id, kind, name, phase: 'waiting', done: 0, total, cancel: () => controller.abort() }]);
      const run = async () => {
        if (controller.signal.aborted) return change(id, { phase: 'cancelled' });
        try {
          await work((phase, done, size) => change(id, { phase, done, total: size }), controller.signal);
          change(id, { phase: 'done' });
        } catch (err) {
          if (err instanceof Cancelled || controller.signal.aborted) change(id, { phase: 'cancelled' });
          else change(id, { phase: 'failed', message: errorText(err) });
        }
      };
      if (kind === 'download') return void run();
      queue.current = queue.current.then(run);
    },
    [change],
  );

  const upload = useCallback(
    (files: readonly File[], directory: string, overwrite: boolean) => {
      for (const file of files) {
        start('upload', file.name, file.size, async (progress, signal) => {
          await uploadFile(agentId, joinPath(directory, file.name), file, overwrite, progress, signal);
          onUploaded();
        });
      }
    },
    [agentId, onUploaded, start],
  );

  const download = useCallback(
    (path: string, name: string, size: number) => start('download', name, size, (progress, signal) => downloadFile(agentId, path, name, size, progress, signal)),
    [agentId, start],
  );

  const dismiss = useCallback((id: number) => setTransfers((list) => list.filter((t) => t.id !== id)), []);
  return { transfers, upload, download, dismiss };
}
