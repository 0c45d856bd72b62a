// xterm.js wired to a terminal socket, for the server's terminal page and an agent's Shell tab alike:
// the terminal fits its container and follows its size (the shell is told), keystrokes and pastes go
// to the socket, and when the session ends the page learns why. Ctrl+Shift+C copies the selection and
// Ctrl+Shift+V pastes (plain Ctrl+C stays the shell's interrupt). `restart()` starts a new session.
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import { letTerminalStylesThroughCsp } from './csp-styles';
import { TerminalSocket, type SocketTarget } from './terminal-socket';

letTerminalStylesThroughCsp();

export type Phase = { kind: 'connecting' } | { kind: 'open' } | { kind: 'ended'; reason: string };

export interface TerminalSession {
  phase: Phase;
  /** The open terminal, for the touch keys and the clipboard buttons. */
  terminal: Terminal | null;
  socket: RefObject<TerminalSocket | null>;
  /** Cluster mode: the server instance the server's shell runs on. */
  instanceId: string | null;
  /** A device shell's session id. */
  sessionId: string | null;
  /** Ends the session from this side; `reason` is what the page then says. */
  end(reason: string): void;
  /** A new session in the same terminal pane. */
  restart(): void;
}

export function useTerminalSession(
  host: RefObject<HTMLDivElement | null>,
  target: SocketTarget,
  options: { preflight?: () => Promise<string | null> } = {},
): TerminalSession {
  const [phase, setPhase] = useState<Phase>({ kind: 'connecting' });
  const [instanceId, setInstanceId] = useState<string | null>(null);
  const [sessionId, setSessionId] = useState<string | null>(null);
  // Bumped by restart(): the effect below tears the old terminal down and starts a new one.
  const [generation, setGeneration] = useState(0);
  const [terminal, setTerminal] = useState<Terminal | null>(null);
  const socket = useRef<TerminalSocket | null>(null);
  const targetRef = useRef(target);
  targetRef.current = target;
  const preflight = useRef(options.preflight);
  preflight.current = options.preflight;

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    setPhase({ kind: 'connecting' });
    setInstanceId(null);
    setSessionId(null);
    const term = new Terminal({ cursorBlink: true, fontSize: 14, scrollback: 5000, theme: { background: '#0d1117' } });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(element);
    fit.fit();
    const ended = (reason: string) => {
      setPhase({ kind: 'ended', reason });
      term.options.disableStdin = true;
    };
    const connect = () =>
      new TerminalSocket(
        targetRef.current,
        { cols: term.cols, rows: term.rows },
        {
          open: () => {
            setPhase({ kind: 'open' });
            // The pane may have changed while connecting: resizes before this were not sent.
            socket.current?.resize({ cols: term.cols, rows: term.rows });
            term.focus();
          },
          output: (bytes) => term.write(bytes),
          instance: setInstanceId,
          session: setSessionId,
          closed: ended,
        },
      );
    // Asked first where the target can tell: a server without its PTY module says why, and no socket is
    // refused in the browser's log.
    let left = false;
    void (preflight.current?.() ?? Promise.resolve(null)).then((unavailable) => {
      if (left) return;
      if (unavailable) ended(unavailable);
      else socket.current = connect();
    });
    setTerminal(term);
    term.attachCustomKeyEventHandler((event) => clipboardKey(term, event));
    const input = term.onData((text) => socket.current?.sendInput(text));
    const binary = term.onBinary((data) => socket.current?.sendBinary(data));
    const resized = term.onResize((size) => socket.current?.resize(size));
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
      socket.current?.close();
      socket.current = null;
      setTerminal(null);
      term.dispose();
    };
  }, [generation, host, target.path]);

  const end = useCallback(
    (reason: string) => {
      socket.current?.close();
      socket.current = null;
      setPhase({ kind: 'ended', reason });
      if (terminal) terminal.options.disableStdin = true;
    },
    [terminal],
  );
  const restart = useCallback(() => setGeneration((g) => g + 1), []);
  return { phase, terminal, socket, instanceId, sessionId, end, restart };
}

/**
 * Ctrl+Shift+C copies the selection (Ctrl+C is the shell's interrupt); Ctrl+Shift+V is left to the
 * browser, whose paste event xterm.js turns into input. Returns false for keys xterm must not send.
 */
function clipboardKey(term: Terminal, event: KeyboardEvent): boolean {
  if (event.type !== 'keydown' || !event.ctrlKey || !event.shiftKey) return true;
  if (event.code === 'KeyC') {
    const selection = term.getSelection();
    if (selection) void navigator.clipboard?.writeText(selection).catch(() => undefined);
    event.preventDefault();
    return false;
  }
  return event.code !== 'KeyV';
}
