// The error a command handler throws for the operator; its own file so that code outside the handlers
// (tunnel-sessions.ts, which types.ts names in CommandContext) can throw it without an import circle.

/** An error whose message is meant for the operator (sent back as the answer's `error`). */
export class CommandError extends Error {}
