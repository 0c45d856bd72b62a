// A shell on the agent (GET /agents/{id}/shell, a WebSocket framed as the server terminal's) as a
// terminal socket target: what its close codes and refusals mean, in a technician's words.
import { api, ApiError } from '../../api/client';
import type { SocketTarget } from '../../terminal/terminal-socket';
import { agentPath } from '../device/device-types';

export function deviceShellTarget(agentId: string): SocketTarget {
  const path = agentPath(agentId, '/shell');
  return { path, closeReason, refusalReason: () => refusalReason(path) };
}

function closeReason(code: number): string {
  switch (code) {
    case 1000:
      return 'The shell has exited.';
    case 4008:
      return 'Closed after the idle timeout: nothing was typed or shown for too long.';
    case 4009:
      return 'Closed at the session time limit.';
    case 1011:
      return 'The agent went away (disconnected or restarted); the shell ended.';
    default:
      return `The connection was lost (code ${code}).`;
  }
}

/**
 * The browser hides why an upgrade was refused; the same request without the upgrade goes through the
 * same checks and answers with the error body (426 when every check passed: the network refused it).
 */
async function refusalReason(path: string): Promise<string> {
  try {
    await api(path);
  } catch (err) {
    if (err instanceof ApiError && err.status !== 426 && err.status !== 0) return err.message;
  }
  return 'The shell could not be opened. Your session may have ended, or the connection to the server was refused.';
}
