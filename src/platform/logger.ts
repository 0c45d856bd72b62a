// Logging: pino, pretty on a terminal and JSON otherwise. Credentials never reach a log line: the
// request serializer redacts the `api_key`/`token` query parameters (WebSocket clients put their
// credentials there) and pino's redaction removes credential headers and secret fields wherever logged.
import type { IncomingMessage } from 'node:http';
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger } from 'pino';

const REDACTED = '[redacted]';
const SECRET_QUERY_PARAMS = new Set(['api_key', 'token']);

const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'password',
  '*.password',
  '*.token',
  '*.pending_token',
  '*.secret',
];

/** Replaces the values of credential query parameters in a request URL. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      return SECRET_QUERY_PARAMS.has(decodeName(rawName)) ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, q)}?${query}`;
}

/** Decodes a query parameter name the way the query parser will see it, so `api%5Fkey` is caught too. */
function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

interface LoggedRequest extends IncomingMessage {
  id?: string;
  ip?: string;
}

const serializers = {
  req: (req: LoggedRequest) => ({
    method: req.method,
    url: redactUrl(req.url ?? ''),
    remoteAddress: req.ip ?? req.socket?.remoteAddress,
  }),
  res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
  err: pino.stdSerializers.err,
};

export interface LoggerOptions {
  level: string;
  /** Defaults to pretty output when stdout is a terminal. */
  pretty?: boolean;
  /** Where lines go (tests capture them); defaults to stdout. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  const settings = {
    level: options.level,
    serializers,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
  };
  if (options.destination) return pino(settings, options.destination);
  if (options.pretty ?? process.stdout.isTTY) {
    // Synchronous, so the last lines before process.exit() ("stopped", a fatal start-up error) are not lost.
    return pino(settings, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true }));
  }
  return pino(settings);
}
