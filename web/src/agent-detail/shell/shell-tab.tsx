// A shell on the agent in xterm.js: the terminal fills the pane and follows its size (the shell is
// told), text can be copied and pasted, and when the session ends the tab says why and offers to
// reconnect. Every session is recorded and listed in the Recordings tab.
import { useMemo, useRef } from 'react';
import type { AgentDetail } from '../../api/types';
import { useTerminalSession } from '../../terminal/use-terminal-session';
import { gatedTab } from '../device/device-gate';
import { ClipboardButtons } from './clipboard-buttons';
import { deviceShellTarget } from './device-shell';
import '../../terminal/terminal.css';
import './shell.css';

function AgentShell({ agent }: { agent: AgentDetail }) {
  const agentId = agent.id;
  const host = useRef<HTMLDivElement>(null);
  const target = useMemo(() => deviceShellTarget(agentId), [agentId]);
  const session = useTerminalSession(host, target);
  const { phase, terminal } = session;
  return (
    <div className="shell-tab">
      <div className="terminal-head">
        <span className="muted" role="status" data-testid="shell-status">
          {phase.kind === 'connecting'
            ? 'Connecting…'
            : phase.kind === 'open'
              ? 'A shell on the agent. The session is recorded; start and end are in the audit log.'
              : phase.reason}
        </span>
        <ClipboardButtons terminal={phase.kind === 'open' ? terminal : null} />
        {phase.kind === 'ended' ? (
          <button type="button" className="primary" onClick={session.restart}>
            Reconnect
          </button>
        ) : (
          <button type="button" disabled={phase.kind !== 'open'} onClick={() => session.end('You closed the session.')}>
            Close session
          </button>
        )}
      </div>
      <div className="terminal-host shell-host" ref={host} aria-label="Shell on the agent" />
    </div>
  );
}

export const ShellTab = gatedTab('shell', AgentShell);
