// One small HTTP request with a text answer, on node:http(s) rather than fetch. The reference agent sends
// one every minute, and the fleet simulator runs 10,000 agents in one process: fetch's Request, Response,
// Headers, web streams and combined abort signals came to about a third of the fleet's CPU and most of
// its garbage, and with it its collector pauses. Keep-alive comes from Node's global agent (idle
// sockets are closed after 5 s, well before any server's keep-alive timeout, so none is reused as the
// server closes it).
import http from 'node:http';
import https from 'node:https';

/** Answers longer than this (in characters) are cut off with an error: the agent only ever expects small JSON answers. */
export const MAX_ANSWER_CHARS = 1024 * 1024;

export interface TextRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** Cancels the request (the agent stops). */
  signal: AbortSignal;
  /** From sending to the end of the answer. */
  timeoutMs: number;
}

export interface TextAnswer {
  status: number;
  statusText: string;
  text: string;
}

/** Rejects with an Error saying why no answer came ("ECONNREFUSED", "no answer within 30 s", ...). */
export function requestText(url: URL, request: TextRequest): Promise<TextAnswer> {
  const transport = url.protocol === 'https:' ? https : http;
  // Sent as one Buffer: a string body would be copied again behind the headers and once more for the
  // socket, and for a 25 KB heartbeat those copies were most of the fleet's garbage.
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const headers = body === undefined ? request.headers : { ...request.headers, 'content-length': String(body.length) };
  return new Promise((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      reject(request.signal.aborted ? err : new Error(err.code ?? err.message, { cause: err }));
    };
    const req = transport.request(url, { method: request.method, headers, signal: request.signal }, (res) => {
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (chunk: string) => {
        text += chunk;
        if (text.length > MAX_ANSWER_CHARS) req.destroy(new Error(`answer longer than ${MAX_ANSWER_CHARS} characters`));
      });
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(deadline);
        resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', text });
      });
    });
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${request.timeoutMs / 1000} s`)), request.timeoutMs);
    req.on('error', fail);
    req.end(body);
  });
}
