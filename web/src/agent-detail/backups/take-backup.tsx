// "Take backup now": the server asks the agent over its WebSocket and waits up to 120 s for the
// configuration, so the button shows how long it has been waiting and what came of it.
import { useEffect, useState } from 'react';
import { api } from '../../api/client';
import { formatBytes, formatDateTime } from '../../ui/format';
import { ErrorBanner } from '../../ui/widgets';
import { type ConfigBackupCreated } from './backup-types';

/** The server gives up after this long (POST /agents/{id}/backup). */
const AGENT_WAIT_S = 120;

export function TakeBackup({ agentId, connected, onTaken }: { agentId: string; connected: boolean; onTaken: () => void }) {
  const [busy, setBusy] = useState(false);
  const [waited, setWaited] = useState(0);
  const [result, setResult] = useState<ConfigBackupCreated>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    if (!busy) return;
    const started = Date.now();
    const timer = setInterval(() => setWaited(Math.round((Date.now() - started) / 1000)), 1000);
    return () => clearInterval(timer);
  }, [busy]);

  const take = async () => {
    setBusy(true);
    setWaited(0);
    setResult(undefined);
    setError(undefined);
    try {
      setResult(await api<ConfigBackupCreated>(`/agents/${encodeURIComponent(agentId)}/backup`, { method: 'POST', body: {} }));
      onTaken();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="take-backup">
      <div className="row">
        <button type="button" className="primary" disabled={busy} onClick={() => void take()}>
          {busy ? 'Taking backup…' : 'Take backup now'}
        </button>
        {busy && (
          <span className="muted" role="status">
            Waiting for the agent to send its configuration ({waited} s, at most {AGENT_WAIT_S} s)…
          </span>
        )}
        {!busy && !connected && <span className="muted">The agent is not connected right now; a backup needs a live connection.</span>}
      </div>
      {result && (
        <p className="banner banner-info" role="status">
          {result.created
            ? `Backup #${result.id} saved (${formatBytes(result.size)}).`
            : `The configuration has not changed since backup #${result.id} of ${formatDateTime(result.created_at)}; nothing new was stored.`}
        </p>
      )}
      <ErrorBanner error={error} />
    </div>
  );
}
