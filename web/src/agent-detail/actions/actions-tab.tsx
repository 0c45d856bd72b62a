// Things a technician does to a device: run a command or a library script, update it, reboot it (every
// call waits for the agent's answer; destructive ones ask first and show that they are still waiting),
// and, without the agent, move it to another customer or delete it.
import { useState } from 'react';
import { RunScriptPanel } from '../../scripts/run-script-panel';
import { ConfirmButton } from '../../ui/widgets';
import { ManagePanel } from '../manage/manage-panel';
import type { TabProps } from '../tab-props';
import { useAgentCommand } from './agent-command';
import { ExecPanel } from './exec-panel';
import { CommandOutcome, UpdatePanel } from './update-panel';

export function ActionsTab({ agent, reload }: TabProps) {
  return (
    <>
      {!agent.connected && (
        <div className="banner banner-warn" role="status">
          The agent is not connected now: commands will fail until it reconnects.
        </div>
      )}
      <div className="panels">
        <ExecPanel agentId={agent.id} />
        <RunScriptPanel agentId={agent.id} platform={agent.platform} />
        <UpdatePanel agentId={agent.id} onDone={reload} />
        <RebootPanel agentId={agent.id} onDone={reload} />
        <ManagePanel agent={agent} onChanged={reload} />
      </div>
    </>
  );
}

function RebootPanel({ agentId, onDone }: { agentId: string; onDone: () => void }) {
  const reboot = useAgentCommand(agentId, 'reboot');
  const [delay, setDelay] = useState(0);
  return (
    <div className="card panel">
      <h2>Reboot</h2>
      <div className="row">
        <label>
          Delay (seconds)
          <input type="number" min={0} max={86_400} value={delay} onChange={(e) => setDelay(Number(e.target.value))} />
        </label>
        <ConfirmButton
          label="Reboot"
          question="Reboot this device? Everyone working on it is interrupted."
          busyLabel="Rebooting…"
          onConfirm={async () => {
            await reboot.run({ delay });
            onDone();
          }}
        />
      </div>
      <CommandOutcome title="Reboot" state={reboot} />
    </div>
  );
}
