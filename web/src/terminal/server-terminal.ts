// The server's own shell (contract §11) as a terminal socket target: its availability asked first, and
// its refusals and close codes in the words of the server terminal's settings.
import type { ApiBody } from '../api/api-types';
import { api, ApiError } from '../api/client';
import type { SocketTarget } from './terminal-socket';

export const SERVER_TERMINAL: SocketTarget = { path: '/terminal', closeReason, refusalReason };

/** Null when the terminal can open here; else the sentence saying why not (GET /terminal/status). */
export async function terminalAvailability(): Promise<string | null> {
  try {
    const status = await api<ApiBody<'/terminal/status'>>('/terminal/status');
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
