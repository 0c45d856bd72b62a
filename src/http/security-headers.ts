// One set of security headers on every answer of the app: the web console's pages and files, Swagger UI
// at /docs, JSON answers and errors (issue 57: /docs had no CSP or X-Frame-Options, JSON answers no
// nosniff). The Content-Security-Policy is the console's strict one: nothing from elsewhere, no inline
// script or style, no framing. Swagger UI works under it too (its page loads only its own files, and
// the "Try it out" calls go to this server); the console's page adds its per-answer style nonce
// (web-console.routes.ts) and 'wasm-unsafe-eval', which is the only policy that differs: the session
// player (asciinema-player) parses recordings with a WebAssembly module shipped inside its script,
// and compiling WebAssembly needs that keyword. It allows no eval() and no script from anywhere else.
//
// Set in onRequest, so errors, 404s and answers of hooks that stop a request carry them too; the
// router's own answers to undecodable URLs get them from frameworkErrorHandler (input-guard.ts).
// Not @fastify/helmet: version 13.2 builds helmet's middleware again on every request (11 µs each,
// measured here, against 1 µs for setting these fixed headers), and its defaults would add
// `upgrade-insecure-requests` and HSTS, which break a server reached over plain HTTP on a LAN; HSTS
// belongs to whatever terminates TLS.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * The policy; `styleNonce` lets the console's own scripts add `<style>` elements stamped with it, and
 * `wasm` lets them compile WebAssembly (the console's page only).
 */
export function contentSecurityPolicy(styleNonce?: string, options: { wasm?: boolean } = {}): string {
  return [
    "default-src 'none'",
    options.wasm ? "script-src 'self' 'wasm-unsafe-eval'" : "script-src 'self'",
    styleNonce ? `style-src 'self' 'nonce-${styleNonce}'` : "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': contentSecurityPolicy(),
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
});

export const securityHeadersPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', (_request, reply, done) => {
      reply.headers(SECURITY_HEADERS);
      done();
    });
  },
  { name: 'security-headers' },
);
