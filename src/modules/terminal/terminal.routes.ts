// GET /api/v1/terminal (contract §11): the web terminal over a WebSocket, for signed-in users only.
// Registered only when TERMINAL_ENABLED (else the path is a plain 404 for everyone). Everything is
// checked before the upgrade, in the contract's error body: 401 for API keys, pending two-factor tokens and expired tokens, 403 for a foreign Origin
// (cross-site WebSocket hijacking), 429 past five sessions per user, 503 when the PTY module could not be
// loaded at start-up (the rest of the server runs on). Start and end are audited (user, duration, close
// reason); keystrokes never are.
import type {} from '@fastify/websocket';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { originAllowed, requireWebSocketUpgrade, WEBSOCKET_ONLY_NOTE } from '../../http/websocket-route.js';
import { AppError } from '../../platform/errors.js';
import type { AuditService } from '../audit/audit.service.js';
import { loadPty, type PtyLoader } from './pty-module.js';
import { shellPath, TerminalSession } from './terminal-session.js';

export const MAX_SESSIONS_PER_USER = 5;

export interface TerminalOptions {
  shell: string | undefined;
  allowedOrigins: readonly string[];
  audit: AuditService;
  /** Cluster mode: this instance's id, told to the client first, since the shell runs here (INSTANCE_ID). */
  instanceId?: string;
  /** Loads the PTY library; tests pass one that fails, as a missing native binary does. */
  loadPty?: PtyLoader;
}

const size = (fallback: number) => z.coerce.number().int().min(1).max(1000).default(fallback);

export const terminalRoutes: FastifyPluginAsyncZod<TerminalOptions> = async (app, options) => {
  const sessions = new Map<number, number>(); // user id → open sessions
  const shell = shellPath(options.shell);
  const pty = await loadPty(options.loadPty);
  // A warning, not an error: the server is sound and serves everything else; one feature is off.
  if (!pty.available) app.log.warn(`terminal unavailable: ${pty.reason}; the server runs without the web terminal`);

  app.get(
    '/terminal/status',
    {
      config: { access: 'session' },
      schema: {
        summary: 'Whether the web terminal can open here, and why not',
        description:
          'For the console\'s Terminal page, which asks before it opens the WebSocket (a refused upgrade reaches a browser without its status). `available` is false when the PTY module could not be loaded at start-up, and `reason` says why. Signed-in users only, as the terminal.',
        tags: ['terminal'],
        response: { 200: z.object({ available: z.boolean(), reason: z.string().nullable() }) },
      },
    },
    async (request) => {
      if (callerOf(request).kind !== 'user') throw new AppError('UNAUTHORIZED', 'The terminal takes a signed-in user only');
      return pty.available ? { available: true, reason: null } : { available: false, reason: `terminal unavailable: ${pty.reason}` };
    },
  );

  app.route({
    method: 'GET',
    url: '/terminal',
    config: { access: 'session' },
    schema: {
      summary: 'Web terminal: a shell on the server over a WebSocket (signed-in users only)',
      description:
        'Sign in with `token=<JWT>` (browsers cannot set headers on WebSockets) or `Authorization: Bearer`. API keys of any permission → 401. An `Origin` must be this server\'s or listed in ALLOWED_ORIGINS (else 403). At most 5 sessions per user (429). ' +
        'Client → server: binary messages are keystrokes; text messages are JSON control frames `{"type":"resize","cols":N,"rows":N}`. Server → client: binary output. ' +
        'The shell (TERMINAL_SHELL) is killed when the socket closes; the socket closes when the shell exits (1000) or after 30 minutes without input or output (4008). TERMINAL_ENABLED=false → 404. ' +
        'When the PTY module could not be loaded at start-up (a missing native binary), every request gets 503 TERMINAL_UNAVAILABLE after authentication, its message saying why; the rest of the server works. ' +
        'In cluster mode the shell runs on the server instance this WebSocket reached (behind a load balancer, whichever it chose), not on every instance: its first message, before any output, is the text message `{"type":"instance","instance_id":"<INSTANCE_ID>"}`, and the console shows it. On one server no such message is sent. ' +
        'The audit log records `terminal.start` and `terminal.end` (the end entry\'s path is `/api/v1/terminal;duration_s=N;reason=client|shell|idle`, its status_code the close code: 1000, or 4008 idle).' +
        WEBSOCKET_ONLY_NOTE,
      tags: ['terminal'],
      querystring: z.object({ token: z.string().optional(), cols: size(80), rows: size(24) }),
    },
    preHandler: async (request) => {
      if (!pty.available) throw new AppError('TERMINAL_UNAVAILABLE', `terminal unavailable: ${pty.reason}`);
      const origin = request.headers.origin;
      if (origin !== undefined && !originAllowed(origin, `${request.protocol}://${request.host}`, options.allowedOrigins)) {
        throw new AppError('FORBIDDEN', `Origin ${origin} may not open the terminal; add it to ALLOWED_ORIGINS`);
      }
      const caller = callerOf(request);
      if (caller.kind !== 'user') throw new AppError('UNAUTHORIZED', 'The terminal takes a signed-in user only');
      if ((sessions.get(caller.userId) ?? 0) >= MAX_SESSIONS_PER_USER) {
        throw new AppError('RATE_LIMITED', `At most ${MAX_SESSIONS_PER_USER} terminal sessions per user; close one first`);
      }
    },
    handler: requireWebSocketUpgrade,
    wsHandler: (socket, request) => {
      const caller = callerOf(request);
      if (caller.kind !== 'user') return socket.close(1008, 'user only');
      sessions.set(caller.userId, (sessions.get(caller.userId) ?? 0) + 1);
      // The address now: when the session ends the socket is closed and no longer knows it.
      const ip = request.ip ?? '';
      const entry = (action: string, path: string, status: number) => ({ actor_type: 'user' as const, actor: caller.username, action, method: 'GET', path, status_code: status, ip });
      const log = (err: unknown) => request.log.error({ err }, 'terminal audit entry failed');
      options.audit.recordSoon(entry('terminal.start', '/api/v1/terminal', 101), log);
      if (options.instanceId) socket.send(JSON.stringify({ type: 'instance', instance_id: options.instanceId }));
      if (!pty.available) return socket.close(1011, 'terminal unavailable');
      try {
        new TerminalSession(socket, pty.pty, { shell, cols: request.query.cols, rows: request.query.rows, username: caller.username }, (end) => {
          const left = (sessions.get(caller.userId) ?? 1) - 1;
          if (left > 0) sessions.set(caller.userId, left);
          else sessions.delete(caller.userId);
          const seconds = Math.round(end.durationMs / 1000);
          options.audit.recordSoon(entry('terminal.end', `/api/v1/terminal;duration_s=${seconds};reason=${end.reason}`, end.reason === 'idle' ? 4008 : 1000), log);
        });
      } catch (err) {
        request.log.error({ err, shell }, 'the terminal shell could not be started');
        sessions.set(caller.userId, Math.max(0, (sessions.get(caller.userId) ?? 1) - 1));
        socket.close(1011, 'shell could not be started');
      }
    },
  });
};
