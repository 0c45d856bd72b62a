// What sign-in needs from JWTs, kept free of Fastify: http/auth.ts implements it with @fastify/jwt
// (HS256 only, on the injected clock).
export interface TokenSigner {
  sign(claims: Record<string, unknown>, expiresInSeconds: number): string;
  /** The claims of a valid token, or null for a bad signature, algorithm, format or an expired token. */
  verify(token: string): Record<string, unknown> | null;
}

export const ACCESS_TOKEN_SECONDS = 8 * 60 * 60;
export const PENDING_TOKEN_SECONDS = 5 * 60;
