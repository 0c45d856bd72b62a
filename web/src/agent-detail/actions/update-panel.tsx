// Operating-system updates on the agent's device: check which are available, install them, or
// upgrade to a new major version. Installing may reboot the device, so it asks first.
import { useState } from 'react';
import { ConfirmButton, ErrorBanner } from '../../ui/widgets';
import { useAgentCommand, waitingText, type CommandState } from './agent-command';
import { AnswerView } from './answer-view';

export function UpdatePanel({ agentId, onDone }: { agentId: string; onDone: () => void }) {
  const check = useAgentCommand(agentId, 'update-check');
  const update = useAgentCommand(agentId, 'update');
  const major = useAgentCommand(agentId, 'major-update');
  const [reboot, setReboot] = useState(false);
  const [securityOnly, setSecurityOnly] = useState(false);
  const [version, setVersion] = useState('');
  const busy = check.busy || update.busy || major.busy;

  return (
    <div className="card panel">
      <h2>Updates</h2>
      <div className="row">
        <button type="button" disabled={busy} onClick={() => void check.run({})}>
          {check.busy ? 'Checking…' : 'Check for updates'}
        </button>
      </div>
      <div className="row">
        <label className="inline">
          <input type="checkbox" checked={securityOnly} onChange={(e) => setSecurityOnly(e.target.checked)} /> Security updates only
        </label>
        <label className="inline">
          <input type="checkbox" checked={reboot} onChange={(e) => setReboot(e.target.checked)} /> Reboot when needed
        </label>
        <ConfirmButton
          label="Install updates"
          question="Install updates on this device now?"
          busyLabel="Installing…"
          onConfirm={async () => {
            await update.run({ reboot, security_only: securityOnly });
            onDone();
          }}
        />
      </div>
      <div className="row">
        <label>
          Major version
          <input value={version} onChange={(e) => setVersion(e.target.value)} placeholder="e.g. 26.1" maxLength={100} />
        </label>
        <ConfirmButton
          label="Major upgrade"
          question={`Upgrade this device to ${version || '(no version given)'}?`}
          busyLabel="Upgrading…"
          onConfirm={async () => {
            if (!version.trim()) return;
            await major.run({ version: version.trim(), reboot });
            onDone();
          }}
        />
      </div>
      <CommandOutcome title="Update check" state={check} />
      <CommandOutcome title="Update" state={update} />
      <CommandOutcome title="Major upgrade" state={major} />
    </div>
  );
}

/** The progress, then the agent's answer (shown as data, never as markup) or the error. */
export function CommandOutcome({ title, state }: { title: string; state: Omit<CommandState<unknown>, 'run'> }) {
  const waiting = waitingText(state.busy, state.elapsed);
  if (!waiting && state.result === undefined && !state.error) return null;
  return (
    <div className="outcome" data-testid="command-outcome">
      <h3>{title}</h3>
      {waiting && (
        <p className="muted" aria-live="polite">
          {waiting}
        </p>
      )}
      <ErrorBanner error={state.error} />
      {state.result !== undefined && <AnswerView answer={state.result} />}
    </div>
  );
}
