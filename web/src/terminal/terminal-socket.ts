// The terminal WebSocket (contract §11) as the page uses it: keystrokes go as binary messages, size
// changes as JSON text messages, output arrives as binary. Close codes become the sentence a user reads;
// a refused upgrade, whose status the browser hides, is asked about over plain HTTP.
import { api, ApiError } from '../api/client';
import { currentToken } from '../api/session';

export interface TerminalSize {
  cols: number;
  rows: number;
}

export interface TerminalSocketEvents {
  open(): void;
  output(bytes: Uint8Array): void;
  /** Cluster mode: the server instance the shell runs on (its first message). */
  instance?(instanceId: string): void;
  /** The session ended or was refused; the reason is the sentence to show. */
  closed(reason: string): void;
}

export class TerminalSocket {
  private readonly ws: WebSocket;
  private readonly encoder = new TextEncoder();
  private opened = false;

  constructor(size: TerminalSize, events: TerminalSocketEvents) {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    // Browsers cannot set headers on a WebSocket: the contract's `token` query parameter carries the
    // JWT (the server keeps it out of its logs).
    const query = new URLSearchParams({ token: currentToken() ?? '', cols: String(size.cols), rows: String(size.rows) });
    this.ws = new WebSocket(`${scheme}//${location.host}/api/v1/terminal?${query.toString()}`);
    this.ws.binaryType = 'arraybuffer';
    this.ws.onopen = () => {
      this.opened = true;
      events.open();
    };
    this.ws.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
      if (typeof event.data === 'string') {
        const instance = instanceOf(event.data);
        if (instance !== null) events.instance?.(instance);
        else events.output(this.encoder.encode(event.data));
        return;
      }
      events.output(new Uint8Array(event.data));
    };
    this.ws.onclose = (event) => {
      if (this.opened) events.closed(closeReason(event.code));
      // Unless the page has left meanwhile (close() clears the handler).
      else
        void refusalReason().then((reason) => {
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

/** Null when the terminal can open here; else the sentence saying why not (GET /terminal/status). */
export async function terminalAvailability(): Promise<string | null> {
  try {
    const status = await api<{ available: boolean; reason: string | null }>('/terminal/status');
    return status.available ? null : `The terminal is unavailable on this server: ${(status.reason ?? '').replace(/^terminal unavailable: /, '')}.`;
  } catch {
    // An older server, or the terminal turned off (404): the socket's own refusal says what is wrong.
    return null;
  }
}

/**
 * A refused upgrade reaches the page only as close code 1006: the browser hides the HTTP status. The
 * same request without the upgrade goes through the same checks and answers with the contract's error
 * body (426 when every check passed, so the refusal was the network's).
 */
async function refusalReason(): Promise<string> {
  try {
    await api('/terminal');
  } catch (err) {
    if (err instanceof ApiError) {
      if (err.code === 'TERMINAL_UNAVAILABLE') return `The terminal is unavailable on this server: ${err.message.replace(/^terminal unavailable: /, '')}.`;
      if (err.status === 404) return 'The terminal is turned off on this server (TERMINAL_ENABLED=false).';
      if (err.status === 429 || err.status === 403) return err.message;
    }
  }
  return 'The terminal could not be opened. Your session may have ended, or the connection to the server was refused.';
}

function closeReason(code: number): string {
  switch (code) {
    case 1000:
      return 'The shell has exited.';
    case 4008:
      return 'Closed after 30 minutes without input or output.';
    case 1011:
      return 'The server could not start the shell (TERMINAL_SHELL).';
    default:
      return `The connection was lost (code ${code}).`;
  }
}

/** The server's `{"type":"instance","instance_id":"…"}` message (cluster mode), or null for anything else. */
function instanceOf(text: string): string | null {
  if (!text.startsWith('{"type":"instance"')) return null;
  try {
    const message = JSON.parse(text) as { type?: unknown; instance_id?: unknown };
    return message.type === 'instance' && typeof message.instance_id === 'string' ? message.instance_id : null;
  } catch {
    return null;
  }
}
