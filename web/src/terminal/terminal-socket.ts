// A terminal WebSocket as the pages use it: the server's own shell (contract §11) and a shell on an
// agent (issue 59) share the framing. Keystrokes go as binary messages, size changes as JSON text
// messages, output arrives as binary. Close codes become the sentence a user reads; a refused upgrade,
// whose status the browser hides, is asked about over plain HTTP. Each target says what its codes mean.
import { currentToken } from '../api/session';

export interface TerminalSize {
  cols: number;
  rows: number;
}

/** Where a terminal socket goes and how its endings read. */
export interface SocketTarget {
  /** The socket's path under the API (`/terminal`, `/agents/{id}/shell`). */
  path: string;
  /** The sentence for a close code of an opened session. */
  closeReason(code: number): string;
  /** The sentence for a refused upgrade, asked over plain HTTP (the same path without the upgrade). */
  refusalReason(): Promise<string>;
}

export interface TerminalSocketEvents {
  open(): void;
  output(bytes: Uint8Array): void;
  /** Cluster mode: the server instance the shell runs on (the server terminal's first message). */
  instance?(instanceId: string): void;
  /** A device shell's session id (its first message), the one its recording is listed under. */
  session?(sessionId: string): void;
  /** The session ended or was refused; the reason is the sentence to show. */
  closed(reason: string): void;
}

export class TerminalSocket {
  private readonly ws: WebSocket;
  private readonly encoder = new TextEncoder();
  private opened = false;

  constructor(target: SocketTarget, size: TerminalSize, events: TerminalSocketEvents) {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    // Browsers cannot set headers on a WebSocket: the contract's `token` query parameter carries the
    // JWT (the server keeps it out of its logs).
    const query = new URLSearchParams({ token: currentToken() ?? '', cols: String(size.cols), rows: String(size.rows) });
    this.ws = new WebSocket(`${scheme}//${location.host}/api/v1${target.path}?${query.toString()}`);
    this.ws.binaryType = 'arraybuffer';
    this.ws.onopen = () => {
      this.opened = true;
      events.open();
    };
    this.ws.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
      if (typeof event.data === 'string') {
        const control = controlOf(event.data);
        if (control?.type === 'instance') events.instance?.(control.id);
        else if (control?.type === 'session') events.session?.(control.id);
        else events.output(this.encoder.encode(event.data));
        return;
      }
      events.output(new Uint8Array(event.data));
    };
    this.ws.onclose = (event) => {
      if (this.opened) events.closed(target.closeReason(event.code));
      // Unless the page has left meanwhile (close() clears the handler).
      else
        void target.refusalReason().then((reason) => {
          if (this.ws.onclose) events.closed(reason);
        });
    };
  }

  /** Keystrokes (and pasted text) as UTF-8. */
  sendInput(text: string): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(this.encoder.encode(text));
  }

  /** Raw bytes xterm.js reports as binary (some mouse reports): one byte per character. */
  sendBinary(data: string): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff));
  }

  resize(size: TerminalSize): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'resize', cols: size.cols, rows: size.rows }));
  }

  /** Ends the session from this side (the page is left): no `closed` event follows. */
  close(): void {
    this.ws.onclose = null;
    this.ws.onmessage = null;
    this.ws.close(1000);
  }
}

/**
 * The server's first text message: `{"type":"instance","instance_id":"…"}` (cluster mode) or
 * `{"type":"session","session_id":"…"}` (a device shell); null for anything else, which is output.
 */
function controlOf(text: string): { type: 'instance' | 'session'; id: string } | null {
  if (!text.startsWith('{"type":"instance"') && !text.startsWith('{"type":"session"')) return null;
  try {
    const message = JSON.parse(text) as { type?: unknown; instance_id?: unknown; session_id?: unknown };
    if (message.type === 'instance' && typeof message.instance_id === 'string') return { type: 'instance', id: message.instance_id };
    if (message.type === 'session' && typeof message.session_id === 'string') return { type: 'session', id: message.session_id };
    return null;
  } catch {
    return null;
  }
}
