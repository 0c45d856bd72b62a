// Where the console lives, for the redirect URI a provider must know and for sending the browser back:
// PUBLIC_URL when set (behind a proxy that rewrites the host, set it), else the origin the request came
// to (the Host header, and with TRUST_PROXY the proxy's X-Forwarded-Proto/Host). A forged Host can only
// produce a redirect URI the provider has not registered, which it refuses.
import type { FastifyRequest } from 'fastify';

export function consoleOrigin(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return new URL(publicUrl).origin;
  return `${request.protocol}://${request.host}`;
}
