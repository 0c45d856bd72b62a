// Graceful stop: stop accepting, let in-flight requests finish, run every onClose (long-lived services),
// then close the database, all within a deadline. main.ts decides what to do when it is missed.
// Shared by both apps' entry points.
import type { FastifyInstance } from 'fastify';

export const SHUTDOWN_DEADLINE_MS = 10_000;

/** Resolves true when everything closed in time, false when the deadline passed first. */
export async function closeGracefully(
  app: FastifyInstance,
  db: { close(): Promise<void> },
  deadlineMs = SHUTDOWN_DEADLINE_MS,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), deadlineMs);
  });
  const closing = (async () => {
    await app.close();
    await db.close();
    return true as const;
  })();
  try {
    return await Promise.race([closing, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
