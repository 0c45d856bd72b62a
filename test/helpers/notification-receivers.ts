// Real receivers for notification-channel tests: an HTTP server on 127.0.0.1 that records every request
// (method, path, headers, exact body) and answers as told, and an SMTP server (smtp-server, no TLS, with
// or without AUTH) whose messages are parsed with mailparser. Nothing here is a mocked transport.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface HttpReceiver {
  requests: ReceivedRequest[];
  port: number;
  /** http://127.0.0.1:<port><path> */
  url(path?: string): string;
  close(): Promise<void>;
}

type Answer = (req: ReceivedRequest, res: http.ServerResponse) => void;

export const answerWith =
  (status: number, body = '', headers: Record<string, string> = {}): Answer =>
  (_req, res) =>
    res.writeHead(status, headers).end(body);

export async function httpReceiver(answer: Answer = answerWith(200, 'ok')): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(got);
      answer(got, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    requests,
    port,
    url: (path = '/') => `http://127.0.0.1:${port}${path}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface ReceivedMail {
  mail: ParsedMail;
  from: string;
  to: string[];
  /** The AUTH user of the session, if any. */
  user: string | null;
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  /** Sessions opened (verify() opens one too). */
  connections: number;
  close(): Promise<void>;
}

/**
 * An SMTP server on 127.0.0.1 without STARTTLS; with `auth`, AUTH is required and checked. `secure`:
 * TLS from the first byte instead, with smtp-server's built-in self-signed certificate. `port`: listen
 * where a stopped receiver listened (a mail server coming back).
 */
export async function smtpReceiver(auth?: { user: string; pass: string }, options: { secure?: boolean; port?: number } = {}): Promise<SmtpReceiver> {
  const receiver: SmtpReceiver = { port: 0, mails: [], connections: 0, close: async () => undefined };
  const server = new SMTPServer({
    secure: options.secure ?? false,
    disabledCommands: ['STARTTLS'],
    authOptional: !auth,
    allowInsecureAuth: true,
    logger: false,
    onConnect(_session, callback) {
      receiver.connections++;
      callback();
    },
    onAuth(credentials, _session, callback) {
      if (auth && credentials.username === auth.user && credentials.password === auth.pass) return callback(null, { user: credentials.username });
      const refusal = new Error('Invalid username or password') as Error & { responseCode: number };
      refusal.responseCode = 535;
      return callback(refusal);
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          const address = (a: SMTPServerAddress | false) => (a ? a.address : '');
          receiver.mails.push({ mail, from: address(session.envelope.mailFrom), to: session.envelope.rcptTo.map(address), user: (session.user as string | undefined) ?? null });
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  // Clients that give up mid-handshake (a refused certificate) are an expected part of some tests.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  receiver.port = (server.server.address() as AddressInfo).port;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}
