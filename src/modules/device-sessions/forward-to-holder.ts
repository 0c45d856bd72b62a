// Device sessions follow the agent's instance (issue 59, cluster mode), as tunnels do: their bytes ride
// on the agent's socket, which one instance holds, and never cross the bus (it has no flow control). A
// request for a device stream that reached another instance is forwarded to the holder over plain HTTP
// between instances, with the request's own credentials, so the holder authenticates and checks the
// caller itself exactly as for a direct request; a refusal there comes back unchanged. WebSockets (the
// device shell) go through the tunnels' proxy forwarding (tunnels/proxy-forward.ts); plain requests (a
// file download or upload) are piped here both ways, with backpressure.
import http from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.js';
import { FORWARDED_BY_HEADER, type RemoteTunnels, type TunnelHolder } from '../tunnels/remote-tunnels.js';

/** Request headers that go along: credentials, the body's description, and a download's range. */
const PASSED_REQUEST_HEADERS = ['authorization', 'x-api-key', 'content-type', 'content-length', 'range', 'accept', 'accept-encoding', 'user-agent'];
/** Answer headers that come back. */
const PASSED_ANSWER_HEADERS = ['content-type', 'content-length', 'content-range', 'content-disposition', 'content-encoding', 'accept-ranges', 'retry-after', 'x-request-id'];

/** Whether this request was already forwarded by another instance (the holder never forwards again). */
export function wasForwarded(request: FastifyRequest): boolean {
  return request.headers[FORWARDED_BY_HEADER] !== undefined;
}

/**
 * Sends the request (its body streamed, for an upload, or `json` for a body Fastify parsed) to the holder and its answer back to the client,
 * each side read only as fast as the other takes it. Resolves once the client has the whole answer.
 */
export function forwardHttp(request: FastifyRequest, reply: FastifyReply, holder: TunnelHolder, instanceId: string, json?: unknown): Promise<void> {
  const headers: Record<string, string> = { [FORWARDED_BY_HEADER]: instanceId };
  for (const name of PASSED_REQUEST_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  // A body Fastify has parsed already goes as JSON (the raw stream is spent); `json` may add to it.
  const body = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
  if (body) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(body.length);
  }
  const target = new URL(request.url, holder.url);
  return new Promise<void>((resolve, reject) => {
    const upstream = http.request(target, { method: request.method, headers }, (answer) => {
      reply.hijack();
      const out: Record<string, string | string[]> = {};
      for (const name of PASSED_ANSWER_HEADERS) {
        const value = answer.headers[name];
        if (value !== undefined) out[name] = value;
      }
      reply.raw.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(reply.raw);
      answer.once('end', () => resolve());
      answer.once('error', () => reply.raw.destroy());
      reply.raw.once('close', () => {
        answer.destroy();
        resolve();
      });
    });
    upstream.once('error', () => reject(new AppError('SERVICE_UNAVAILABLE', "The server instance holding the agent's connection could not be reached", { headers: { 'retry-after': '5' } })));
    request.raw.once('close', () => {
      if (!request.raw.readableEnded) upstream.destroy();
    });
    if (body) upstream.end(body);
    else if (request.method === 'GET' || request.method === 'HEAD') upstream.end();
    else request.raw.pipe(upstream);
  });
}

/**
 * Where a device stream of `agentId` must go: undefined when this instance holds the agent's socket
 * (serve it here), else the instance that does; 409 AGENT_NOT_CONNECTED when none does (or this request
 * was already forwarded once: a holder that let go meanwhile says so rather than asking around).
 */
export async function streamHolder(
  here: { isConnected(agentId: string): boolean },
  remote: RemoteTunnels | undefined,
  request: FastifyRequest,
  agentId: string,
): Promise<TunnelHolder | undefined> {
  if (here.isConnected(agentId)) return undefined;
  const holder = remote && !wasForwarded(request) ? await remote.locateAgent(agentId) : undefined;
  if (!holder) throw new AppError('AGENT_NOT_CONNECTED', 'The agent is not connected');
  return holder;
}
