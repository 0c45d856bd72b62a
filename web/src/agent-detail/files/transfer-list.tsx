// The running and finished transfers of the Files tab: a progress bar each (a native <progress>, so
// assistive technology reads the percentage), what is happening in words, and Cancel or Dismiss.
import { formatBytes } from '../../ui/format';
import type { Transfer, TransferPhase } from './use-transfers';

const WORDS: Record<TransferPhase, string> = {
  waiting: 'Waiting',
  hashing: 'Computing the SHA-256',
  sending: 'Uploading',
  checking: 'The agent is checking the SHA-256',
  receiving: 'Downloading',
  done: 'Done',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

const FINISHED: ReadonlySet<TransferPhase> = new Set(['done', 'failed', 'cancelled']);

export function TransferList({ transfers, dismiss }: { transfers: readonly Transfer[]; dismiss: (id: number) => void }) {
  if (transfers.length === 0) return null;
  return (
    <ul className="transfers" aria-label="Transfers">
      {transfers.map((t) => {
        const finished = FINISHED.has(t.phase);
        const percent = t.total ? Math.floor((100 * t.done) / t.total) : null;
        return (
          <li key={t.id} className={`transfer transfer-${t.phase}`} data-testid="transfer" data-phase={t.phase}>
            <span className="transfer-name">
              {t.kind === 'upload' ? '↑' : '↓'} <span className="mono">{t.name}</span>
            </span>
            <progress max={100} value={t.phase === 'done' ? 100 : (percent ?? undefined)} aria-label={`${t.kind === 'upload' ? 'Upload' : 'Download'} of ${t.name}`} />
            <span className="muted" role="status">
              {WORDS[t.phase]}
              {!finished && percent !== null && ` ${percent} % (${formatBytes(t.done)} of ${formatBytes(t.total ?? undefined)})`}
              {t.phase === 'done' && t.total !== null && ` (${formatBytes(t.total)})`}
              {t.message && `: ${t.message}`}
            </span>
            {finished ? (
              <button type="button" onClick={() => dismiss(t.id)} aria-label={`Dismiss ${t.name}`}>
                Dismiss
              </button>
            ) : (
              <button type="button" className="danger-outline" onClick={t.cancel}>
                Cancel
              </button>
            )}
          </li>
        );
      })}
    </ul>
  );
}
