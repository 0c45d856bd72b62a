// Types of what the tests use from processes.mjs (plain JavaScript, run by the smoke test without a build).
/** The final stage's ENV (with its line continuations) and CMD of a Dockerfile. */
export function dockerfileRuntime(file: string): { env: Record<string, string>; command: string[] };
