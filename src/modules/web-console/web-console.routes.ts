// Serves the web console (web/, built by Vite) at `/`: its files from memory, and index.html for any
// other page path a browser asks for, so client-side routes survive a reload (SPA fallback). API paths
// and requests that do not ask for a page keep the contract's 404 body. Every answer carries the app's
// strict Content-Security-Policy and the other security headers (http/security-headers.ts): the console
// loads nothing from anywhere else, runs no inline script or style, and cannot be framed.
//
// The page itself is answered with a fresh style nonce each time, in the CSP and in a
// `<meta name="csp-nonce">`: xterm.js (the terminal page) builds its styles in `<style>` elements,
// which the console stamps with that nonce. Only the console's own scripts can create elements, so
// the policy still refuses any style that arrives as markup. The page may also compile WebAssembly
// (the session player's terminal emulator: security-headers.ts says why); no other answer may.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { contentSecurityPolicy } from '../../http/security-headers.js';
import type { Logger } from '../../platform/logger.js';
import { loadStaticSite, type StaticFile } from './static-site.js';

const STYLE_NONCE_META = 'csp-nonce';

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
    const file = site?.files.get(pathname);
    if (file && file !== site?.index) return sendFile(request, reply, file);
    if (pathname !== '/' && pathname !== '/index.html' && !asksForPage(request, pathname)) return reply.callNotFound();
    if (!site) return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
    return sendPage(reply, site.index.body.toString('utf8'));
  });
}

/** index.html with this response's style nonce; never cached, since no two answers are the same. */
function sendPage(reply: FastifyReply, html: string): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  const meta = `<meta name="${STYLE_NONCE_META}" content="${nonce}" />`;
  const body = /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (head) => `${head}${meta}`) : `${meta}${html}`;
  reply.header('content-security-policy', contentSecurityPolicy(nonce, { wasm: true }));
  reply.header('cache-control', 'no-store');
  return reply.type('text/html; charset=utf-8').send(body);
}

/** A browser navigating to a client route: it wants HTML, and the last segment is not a file name. */
function asksForPage(request: FastifyRequest, pathname: string): boolean {
  const last = pathname.slice(pathname.lastIndexOf('/') + 1);
  return (request.headers.accept ?? '').includes('text/html') && !last.includes('.');
}

async function sendFile(request: FastifyRequest, reply: FastifyReply, file: StaticFile): Promise<FastifyReply> {
  reply.header('etag', file.etag);
  reply.header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  reply.header('vary', 'accept-encoding');
  reply.type(file.contentType);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  const accepted = String(request.headers['accept-encoding'] ?? '');
  const brotli = /\bbr\b/.test(accepted) ? await file.brotli() : null;
  if (brotli) return reply.header('content-encoding', 'br').send(brotli);
  const gzip = /\bgzip\b/.test(accepted) ? await file.gzip() : null;
  if (gzip) return reply.header('content-encoding', 'gzip').send(gzip);
  return reply.send(file.body);
}
