// "Take backup now": the server asks the agent over its WebSocket and waits up to 120 s for the
// configuration, so the button shows how long it has been waiting and what came of it.
import { formatBytes, formatDateTime } from '../../ui/format';
import { ErrorBanner } from '../../ui/widgets';
import { useAgentCommand } from '../actions/agent-command';

/** The server gives up after this long (POST /agents/{id}/backup). */
const AGENT_WAIT_S = 120;

export function TakeBackup({ agentId, connected, onTaken }: { agentId: string; connected: boolean; onTaken: () => void }) {
  const backup = useAgentCommand(agentId, 'backup');
  const take = async () => {
    await backup.run({});
    onTaken();
  };
  const result = backup.result;

  return (
    <div className="take-backup">
      <div className="row">
        <button type="button" className="primary" disabled={backup.busy} onClick={() => void take()}>
          {backup.busy ? 'Taking backup…' : 'Take backup now'}
        </button>
        {backup.busy && (
          <span className="muted" role="status">
            Waiting for the agent to send its configuration ({backup.elapsed} s, at most {AGENT_WAIT_S} s)…
          </span>
        )}
        {!backup.busy && !connected && <span className="muted">The agent is not connected right now; a backup needs a live connection.</span>}
      </div>
      {result && (
        <p className="banner banner-info" role="status">
          {result.created
            ? `Backup #${result.id} saved (${formatBytes(result.size)}).`
            : `The configuration has not changed since backup #${result.id} of ${formatDateTime(result.created_at)}; nothing new was stored.`}
        </p>
      )}
      <ErrorBanner error={backup.error} />
    </div>
  );
}
