// The whole stored output of one history entry (GET /history/{id}): the command as sent, stdout and
// stderr. Loaded when asked for, because the list carries only a preview. The output is the agent's and
// untrusted: it is only ever rendered as text.
import { api } from '../api/client';
import { formatBytes } from '../ui/format';
import { ErrorBanner, Loading } from '../ui/widgets';
import { useResource } from '../use-resource';
import type { HistoryDetail, HistoryStatus } from './history-types';

export function HistoryOutput({ id, status }: { id: number; status: HistoryStatus }) {
  // Keyed by status too: a running entry's output appears once the list sees it finish.
  const detail = useResource((signal) => api<HistoryDetail>(`/history/${id}`, { signal }), [id, status]);
  if (!detail.data) return detail.error ? <ErrorBanner error={detail.error} /> : <Loading />;
  return <OutputView entry={detail.data} />;
}

export function OutputView({ entry }: { entry: HistoryDetail }) {
  return (
    <div className="history-output" data-testid="history-output">
      {entry.error && <div className="banner banner-error">{entry.error}</div>}
      <details>
        <summary>Command as sent</summary>
        <pre className="history-command">{entry.command}</pre>
      </details>
      {entry.stdout === null && entry.stderr === null ? (
        <p className="muted">{entry.status === 'running' ? 'No output yet: the agent has not answered.' : 'No output stored.'}</p>
      ) : (
        <>
          <h2>
            Output{' '}
            <span className="muted">
              ({formatBytes(entry.output_bytes)}
              {entry.output_truncated ? ', cut: only the first 256 KiB are kept' : ''})
            </span>
          </h2>
          <pre data-testid="history-stdout">{entry.stdout || ' '}</pre>
          {entry.stderr && (
            <>
              <h2>Errors</h2>
              <pre data-testid="history-stderr">{entry.stderr}</pre>
            </>
          )}
        </>
      )}
    </div>
  );
}
