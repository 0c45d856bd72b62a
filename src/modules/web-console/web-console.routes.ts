// Serves the web console (web/, built by Vite) at `/`: its files from memory, and index.html for any
// other page path a browser asks for, so client-side routes survive a reload (SPA fallback). API paths
// and requests that do not ask for a page keep the contract's 404 body. Every answer carries a strict
// Content-Security-Policy: the console loads nothing from anywhere else, runs no inline script or
// style, and cannot be framed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../platform/logger.js';
import { loadStaticSite, type StaticFile } from './static-site.js';

export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

const NOT_BUILT_PAGE = `<!doctype html><meta charset="utf-8"><title>RMM</title>
<p>The web console is not built. Run <code>npm run build</code> (or start the server with <code>npm start</code>, which builds it).</p>
<p>The API is at <a href="/docs">/docs</a>.</p>`;

export interface WebConsoleOptions {
  dir: string;
  logger: Logger;
}

export async function webConsoleRoutes(app: FastifyInstance, options: WebConsoleOptions): Promise<void> {
  const site = await loadStaticSite(options.dir);
  if (!site) options.logger.warn({ dir: options.dir }, 'web console not built: / answers with a hint (run npm run build)');

  app.get('/*', { config: { access: 'public' }, schema: { hide: true } }, async (request, reply) => {
    const pathname = request.url.split('?')[0] ?? '/';
    if (pathname === '/api' || pathname.startsWith('/api/')) return reply.callNotFound();
    const file = site?.files.get(pathname === '/' ? '/index.html' : pathname);
    if (file) return sendFile(request, reply, file);
    if (!asksForPage(request, pathname)) return reply.callNotFound();
    if (!site) return reply.code(503).headers(CONSOLE_SECURITY_HEADERS).type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
    return sendFile(request, reply, site.index);
  });
}

/** A browser navigating to a client route: it wants HTML, and the last segment is not a file name. */
function asksForPage(request: FastifyRequest, pathname: string): boolean {
  const last = pathname.slice(pathname.lastIndexOf('/') + 1);
  return (request.headers.accept ?? '').includes('text/html') && !last.includes('.');
}

function sendFile(request: FastifyRequest, reply: FastifyReply, file: StaticFile): FastifyReply {
  reply.headers(CONSOLE_SECURITY_HEADERS);
  reply.header('etag', file.etag);
  reply.header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  reply.header('vary', 'accept-encoding');
  reply.type(file.contentType);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  const accepted = String(request.headers['accept-encoding'] ?? '');
  if (file.brotli && /\bbr\b/.test(accepted)) return reply.header('content-encoding', 'br').send(file.brotli);
  if (file.gzip && /\bgzip\b/.test(accepted)) return reply.header('content-encoding', 'gzip').send(file.gzip);
  return reply.send(file.body);
}
