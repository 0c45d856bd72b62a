// The admin socket: a Unix socket in DATA_DIR (mode 0600, so only the account that owns the data can
// use it) through which the CLI runs admin commands inside the running server, whose embedded database
// no other process may open. One JSON line in, one JSON line out.
import net from 'node:net';
import path from 'node:path';
import type { Logger } from '../platform/logger.js';
import type { AdminRequest } from './commands.js';

export interface AdminResponse {
  code: number;
  output: string[];
}

const MAX_REQUEST_BYTES = 64 * 1024;
const CLIENT_TIMEOUT_MS = 60_000;

export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, 'admin.sock');
}

/** Server side: reads one request line, runs it, writes the response line, closes. */
export function adminConnectionHandler(run: (request: AdminRequest) => Promise<AdminResponse>, logger: Logger) {
  return (socket: net.Socket) => {
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      if (buffered.length > MAX_REQUEST_BYTES) return socket.destroy();
      const newline = buffered.indexOf('\n');
      if (newline < 0) return;
      socket.removeAllListeners('data');
      void respond(buffered.slice(0, newline));
    });
    async function respond(line: string) {
      let response: AdminResponse;
      try {
        const request = JSON.parse(line) as AdminRequest;
        if (!Array.isArray(request.argv) || !request.argv.every((a) => typeof a === 'string')) throw new Error('bad request');
        // The command words only: a password travels in its own field and is never logged.
        logger.info({ command: request.argv.filter((a) => !a.startsWith('-')).slice(0, 2).join(' ') }, 'admin command via socket');
        response = await run(request);
      } catch (err) {
        logger.error({ err }, 'admin command failed');
        response = { code: 1, output: ['the server could not run the command; see its log'] };
      }
      socket.end(`${JSON.stringify(response)}\n`);
    }
  };
}

/** Client side: sends the request to the server listening on `socketPath`. */
export function sendAdminRequest(socketPath: string, request: AdminRequest): Promise<AdminResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let received = '';
    socket.setEncoding('utf8');
    socket.setTimeout(CLIENT_TIMEOUT_MS, () => socket.destroy(new Error('the server did not answer in time')));
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      try {
        resolve(JSON.parse(received) as AdminResponse);
      } catch {
        reject(new Error('the server sent an unreadable answer'));
      }
    });
  });
}
