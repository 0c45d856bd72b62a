// The agent's file errors as the contract's error body (issue 59). Agents start their file errors with
// stable prefixes (docs/device-files.md; the reference agent's src/agent/device/fs-paths.ts): those
// become 400, 404 or 409 with the agent's text; anything else stays 502 AGENT_ERROR.
import { AppError, isAppError, type ErrorCode } from '../../platform/errors.js';

const AGENT_PREFIX = 'The agent reported an error: ';

const BY_PREFIX: ReadonlyArray<readonly [prefix: string, code: ErrorCode]> = [
  ['invalid path:', 'VALIDATION_ERROR'],
  ['invalid offset:', 'RANGE_NOT_SATISFIABLE'],
  ['not found:', 'NOT_FOUND'],
  ['already exists:', 'CONFLICT'],
  ['not empty:', 'CONFLICT'],
  ['not a directory:', 'CONFLICT'],
  ['is a directory:', 'CONFLICT'],
  ['permission denied:', 'FORBIDDEN'],
  ['sha256 mismatch:', 'CHECKSUM_MISMATCH'],
];

/** The AppError for an agent's file error text (from a failed answer or a session_closed). */
export function agentFsError(text: string): AppError {
  const found = BY_PREFIX.find(([prefix]) => text.startsWith(prefix));
  return new AppError(found?.[1] ?? 'AGENT_ERROR', `The agent reported an error: ${text}`.slice(0, 2100));
}

/** A failed command as the contract's error: the agent's known file errors mapped, the rest unchanged. */
export function mapAgentError(err: unknown): unknown {
  if (!isAppError(err) || err.code !== 'AGENT_ERROR' || !err.message.startsWith(AGENT_PREFIX)) return err;
  const mapped = agentFsError(err.message.slice(AGENT_PREFIX.length));
  return mapped.code === 'AGENT_ERROR' ? err : mapped;
}

/** Runs one command, mapping the agent's file errors. */
export async function askAgent<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw mapAgentError(err);
  }
}
