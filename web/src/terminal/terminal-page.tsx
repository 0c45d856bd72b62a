// The web terminal: a shell on the RMM server in xterm.js over the terminal WebSocket. The terminal
// fills the page and follows the window's size; when the session ends the page says why and offers a
// new one. Sessions are audited (start and end), keystrokes never are.
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef, useState } from 'react';
import { letTerminalStylesThroughCsp } from './csp-styles';
import { terminalAvailability, TerminalSocket } from './terminal-socket';
import { TouchKeys } from './touch-keys';
import './terminal.css';

letTerminalStylesThroughCsp();

type Phase = { kind: 'connecting' } | { kind: 'open' } | { kind: 'ended'; reason: string };

export function TerminalPage() {
  const host = useRef<HTMLDivElement>(null);
  const [phase, setPhase] = useState<Phase>({ kind: 'connecting' });
  // Cluster mode: the shell runs on the one server instance the socket reached, not on all of them.
  const [instanceId, setInstanceId] = useState<string | null>(null);
  // Bumped by "New session": the effect below tears the old terminal down and starts a new one.
  const [generation, setGeneration] = useState(0);
  // The open terminal and its socket, for the touch keys.
  const [terminal, setTerminal] = useState<Terminal | null>(null);
  const socketRef = useRef<TerminalSocket | null>(null);

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    setPhase({ kind: 'connecting' });
    setInstanceId(null);
    const term = new Terminal({ cursorBlink: true, fontSize: 14, scrollback: 5000, theme: { background: '#0d1117' } });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(element);
    fit.fit();
    const connect = () =>
      new TerminalSocket(
        { cols: term.cols, rows: term.rows },
        {
          open: () => {
            setPhase({ kind: 'open' });
            // The window may have changed while connecting: resizes before this were not sent.
            socketRef.current?.resize({ cols: term.cols, rows: term.rows });
            term.focus();
          },
          output: (bytes) => term.write(bytes),
          instance: (id) => setInstanceId(id),
          closed: (reason) => {
            setPhase({ kind: 'ended', reason });
            term.options.disableStdin = true;
          },
        },
      );
    // Asked first: a server without its PTY module says why, and no socket is refused in the browser's log.
    let left = false;
    void terminalAvailability().then((unavailable) => {
      if (left) return;
      if (unavailable) {
        setPhase({ kind: 'ended', reason: unavailable });
        term.options.disableStdin = true;
      } else socketRef.current = connect();
    });
    setTerminal(term);
    const input = term.onData((text) => socketRef.current?.sendInput(text));
    const binary = term.onBinary((data) => socketRef.current?.sendBinary(data));
    const resized = term.onResize((size) => socketRef.current?.resize(size));
    // The container follows the window (and the phone's rotation); fit() recomputes columns and rows,
    // and onResize tells the shell.
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(element);
    return () => {
      observer.disconnect();
      input.dispose();
      binary.dispose();
      resized.dispose();
      left = true;
      socketRef.current?.close();
      socketRef.current = null;
      setTerminal(null);
      term.dispose();
    };
  }, [generation]);

  return (
    <section className="terminal-page">
      <div className="terminal-head">
        <h1>Terminal</h1>
        <span className="muted" role="status">
          {phase.kind === 'connecting' ? 'Connecting…' : phase.kind === 'open' ? 'A shell on the RMM server. Start and end are written to the audit log.' : phase.reason}
        </span>
        {instanceId !== null ? <span className="muted">Shell on server instance {instanceId}</span> : null}
        {phase.kind === 'ended' ? (
          <button type="button" onClick={() => setGeneration((g) => g + 1)}>
            New session
          </button>
        ) : null}
      </div>
      <div className="terminal-host" ref={host} aria-label="Terminal" />
      <TouchKeys terminal={terminal} onKey={(sequence) => socketRef.current?.sendInput(sequence)} />
    </section>
  );
}
