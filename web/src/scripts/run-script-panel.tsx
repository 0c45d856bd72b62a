// "Run a script" on the agent page's Actions tab: a library script that applies to this agent's
// platform, its parameters (defaults prefilled) and a timeout; the call waits for the agent like a
// command does, then shows the exit code and output, and links the run's history entry.
import { useEffect, useId, useState, type FormEvent } from 'react';
import type { ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import type { Platform } from '../api/types';
import { Link } from '../router';
import { ErrorBanner } from '../ui/widgets';
import { useResource } from '../use-resource';
import { ParameterValues } from './parameter-values';
import { defaultValues, SHELL_LABELS, type Script, type ScriptRunResult } from './script-types';
import './scripts.css';

export function RunScriptPanel({ agentId, platform }: { agentId: string; platform: Platform | null }) {
  const scripts = useResource((signal) => api<Script[]>('/scripts', { signal }), []);
  // The server refuses a script for another platform (409); offering only the ones that apply says so first.
  const usable = (scripts.data ?? []).filter((s) => platform !== null && s.platforms.includes(platform));
  const [scriptId, setScriptId] = useState('');
  const script = usable.find((s) => String(s.id) === scriptId);
  const [values, setValues] = useState<Record<string, string>>({});
  const [timeout, setTimeoutSeconds] = useState(60);
  const run = useScriptRun(agentId);
  const ids = useId();
  useEffect(() => setValues(defaultValues(script)), [script]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (script) void run.start(script.id, { parameters: values, timeout });
  };
  const r = run.result;
  return (
    <form className="card panel" onSubmit={submit} aria-label="Run a script">
      <h2>Run a script</h2>
      <ErrorBanner error={scripts.error} />
      {scripts.data && usable.length === 0 ? (
        <p className="muted">
          {platform === null ? 'The agent has not reported its platform yet, so no script can be matched to it.' : 'No script in the library runs on this platform.'}{' '}
          <Link to="/scripts">Script library</Link>
        </p>
      ) : (
        <>
          <div className="field">
            <label htmlFor={`${ids}-script`}>Script</label>
            <select id={`${ids}-script`} value={scriptId} onChange={(e) => setScriptId(e.target.value)} required>
              <option value="">{scripts.data ? 'Choose a script' : 'Loading scripts…'}</option>
              {usable.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name} ({SHELL_LABELS[s.shell]})
                </option>
              ))}
            </select>
          </div>
          {script?.description && <p className="muted">{script.description}</p>}
          {script && <ParameterValues script={script} values={values} onChange={setValues} />}
          <div className="row">
            <label>
              Timeout (seconds)
              <input type="number" min={1} max={3600} value={timeout} onChange={(e) => setTimeoutSeconds(Number(e.target.value))} />
            </label>
            <button type="submit" className="primary" disabled={run.busy || !script}>
              {run.busy ? 'Running…' : 'Run script'}
            </button>
            <span className="muted" aria-live="polite">
              {run.busy ? `Waiting for the agent… ${run.elapsed} s` : null}
            </span>
          </div>
        </>
      )}
      <ErrorBanner error={run.error} />
      {r && (
        <div data-testid="script-result">
          <p>
            Exit code <strong className="mono">{r.exit_code ?? 'none (killed or timed out)'}</strong>
            {r.history_id !== null && (
              <>
                {' · '}
                <Link to={`/scripts/history/${r.history_id}`}>History entry</Link>
              </>
            )}
          </p>
          <h3>Output</h3>
          <pre data-testid="script-stdout">{r.stdout || ' '}</pre>
          {r.stderr && (
            <>
              <h3>Errors</h3>
              <pre data-testid="script-stderr">{r.stderr}</pre>
            </>
          )}
        </div>
      )}
    </form>
  );
}

/** One run at a time: busy with the seconds waited (a script may run for minutes), then the answer or the error. */
function useScriptRun(agentId: string) {
  const [busy, setBusy] = useState(false);
  const [elapsed, setElapsed] = useState(0);
  const [result, setResult] = useState<ScriptRunResult>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (!busy) return;
    const started = Date.now();
    const timer = setInterval(() => setElapsed(Math.floor((Date.now() - started) / 1000)), 1000);
    return () => clearInterval(timer);
  }, [busy]);
  const start = async (scriptId: number, body: { parameters: Record<string, string>; timeout: number }) => {
    setBusy(true);
    setElapsed(0);
    setResult(undefined);
    setError(undefined);
    try {
      setResult(await api<ScriptRunResult>(`/scripts/${scriptId}/run`, { method: 'POST', body: { agent_id: agentId, ...body } satisfies ApiRequest<'/scripts/{id}/run', 'post'> }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, elapsed, result, error, start };
}
