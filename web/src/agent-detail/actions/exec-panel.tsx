// Run a shell command on the agent and see its exit code and output (the call waits for the agent).
import { useState, type FormEvent } from 'react';
import { ErrorBanner } from '../../ui/widgets';
import { useAgentCommand, waitingText } from './agent-command';

export function ExecPanel({ agentId }: { agentId: string }) {
  const [command, setCommand] = useState('');
  const [timeout, setTimeoutSeconds] = useState(60);
  const exec = useAgentCommand(agentId, 'exec');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void exec.run({ command, timeout });
  };
  const r = exec.result;
  return (
    <form className="card panel" onSubmit={submit} aria-label="Run a command">
      <h2>Run a command</h2>
      <label>
        Command
        <textarea name="command" rows={3} value={command} onChange={(e) => setCommand(e.target.value)} required maxLength={10_000} className="mono" spellCheck={false} />
      </label>
      <div className="row">
        <label>
          Timeout (seconds)
          <input type="number" min={1} max={3600} value={timeout} onChange={(e) => setTimeoutSeconds(Number(e.target.value))} />
        </label>
        <button type="submit" className="primary" disabled={exec.busy}>
          {exec.busy ? 'Running…' : 'Run'}
        </button>
        <span className="muted" aria-live="polite">
          {waitingText(exec.busy, exec.elapsed)}
        </span>
      </div>
      <ErrorBanner error={exec.error} />
      {r && (
        <div data-testid="exec-result">
          <p>
            Exit code <strong className="mono">{r.exit_code ?? 'none (killed or timed out)'}</strong>
            {typeof r.duration_ms === 'number' && <span className="muted"> after {r.duration_ms < 1000 ? `${r.duration_ms} ms` : `${(r.duration_ms / 1000).toFixed(1)} s`}</span>}
          </p>
          <h3>Output</h3>
          <pre data-testid="exec-stdout">{r.stdout || ' '}</pre>
          {r.stderr && (
            <>
              <h3>Errors</h3>
              <pre data-testid="exec-stderr">{r.stderr}</pre>
            </>
          )}
        </div>
      )}
    </form>
  );
}
