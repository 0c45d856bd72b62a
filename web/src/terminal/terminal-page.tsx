// The web terminal: a shell on the RMM server in xterm.js over the terminal WebSocket. The terminal
// fills the page and follows the window's size; when the session ends the page says why and offers a
// new one. Sessions are audited (start and end), keystrokes never are.
import { useRef } from 'react';
import { SERVER_TERMINAL, terminalAvailability } from './server-terminal';
import { TouchKeys } from './touch-keys';
import { useTerminalSession } from './use-terminal-session';
import './terminal.css';

export function TerminalPage() {
  const host = useRef<HTMLDivElement>(null);
  const session = useTerminalSession(host, SERVER_TERMINAL, { preflight: terminalAvailability });
  const { phase, instanceId, terminal, socket } = session;

  return (
    <section className="terminal-page">
      <div className="terminal-head">
        <h1>Terminal</h1>
        <span className="muted" role="status">
          {phase.kind === 'connecting' ? 'Connecting…' : phase.kind === 'open' ? 'A shell on the RMM server. Start and end are written to the audit log.' : phase.reason}
        </span>
        {/* Cluster mode: the shell runs on the one server instance the socket reached, not on all of them. */}
        {instanceId !== null ? <span className="muted">Shell on server instance {instanceId}</span> : null}
        {phase.kind === 'ended' ? (
          <button type="button" onClick={session.restart}>
            New session
          </button>
        ) : null}
      </div>
      <div className="terminal-host" ref={host} aria-label="Terminal" />
      <TouchKeys terminal={terminal} onKey={(sequence) => socket.current?.sendInput(sequence)} />
    </section>
  );
}
