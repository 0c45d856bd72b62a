// What the terminal tests (the server's web terminal, a device shell) do with their WebSocket: type into
// it, turn a refused handshake into its status and error code, and see that a shell's process is gone.
import type WebSocket from 'ws';

/** Sends `text` as keystrokes (a binary message). */
export const typeInto = (ws: WebSocket, text: string) => ws.send(Buffer.from(text, 'utf8'));

/**
 * What became of an opening: `{status: 101, code: 'OPENED'}` (the socket is closed again) or the refusal's
 * status and code; `open` rejects with `{status, body}` as the tests' openers do.
 */
export function refusalOf(open: Promise<{ ws: WebSocket }>): Promise<{ status: number; code: string }> {
  return open.then(
    ({ ws }) => {
      ws.close();
      return { status: 101, code: 'OPENED' };
    },
    (err: { status: number; body: string }) => ({ status: err.status, code: (JSON.parse(err.body) as { code: string }).code }),
  );
}

/** Whether no process has this id any more. */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
