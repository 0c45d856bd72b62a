// Argument checks shared by the command lines that talk to a server (the agent, the updater, the fleet,
// the tunnel client): strict parsing, one wording for the options they have in common, and one way to stop.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { serverUrlProblem } from './server-api.js';

/** A bad command line: the caller prints the message with its usage and exits 2. */
export class UsageError extends Error {}

/** `parseArgs` in strict mode, without positionals; its complaints become UsageErrors. */
export function parseOptions<const T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals: false, options }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** `--server`: required, http or https. */
export function requireServer(server: string | undefined): string {
  if (!server) throw new UsageError('--server is required');
  const problem = serverUrlProblem(server);
  if (problem) throw new UsageError(problem);
  return server;
}

/**
 * The agent key of a long-running process (the agent, the fleet, the updater): RMM_AGENT_KEY first, since a process's
 * arguments are readable by every user of the machine (`ps`, /proc/<pid>/cmdline) and its environment is
 * not. `--key` still works, with a warning; given beside RMM_AGENT_KEY it is ignored, with a warning.
 */
export function agentKeyPreferringEnv(key: string | undefined, env: NodeJS.ProcessEnv, warn: (line: string) => void): string {
  const fromEnv = env.RMM_AGENT_KEY;
  if (fromEnv) {
    if (key !== undefined) warn('warning: --key ignored: RMM_AGENT_KEY is set');
    return fromEnv;
  }
  if (!key) throw new UsageError('set RMM_AGENT_KEY to the agent API key (or give --key)');
  warn('warning: --key is visible to every user of this machine in the process list (ps); set RMM_AGENT_KEY instead');
  return key;
}

/** Warnings about the command line, on standard error. */
export const warnOnStderr = (line: string) => void process.stderr.write(`${line}\n`);

/** `--agent-id`: 16 to 64 hex characters, lowercased; undefined when not given. */
export function checkAgentId(agentId: string | undefined): string | undefined {
  const id = agentId?.toLowerCase();
  if (id !== undefined && !/^[0-9a-f]{16,64}$/.test(id)) throw new UsageError('--agent-id must be 16 to 64 hex characters');
  return id;
}

/**
 * Runs `parse`; a UsageError prints it with `usage` and exits 2, `'help'` prints `usage` and gives
 * undefined (the caller returns), anything else is the parsed arguments.
 */
export async function argsOrExit<T>(parse: () => T | 'help' | Promise<T | 'help'>, usage: string): Promise<T | undefined> {
  let args: T | 'help';
  try {
    args = await parse();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n\n${usage}`);
    process.exit(2);
  }
  if (args === 'help') {
    process.stdout.write(usage);
    return undefined;
  }
  return args;
}

/** One line per event, prefixed with the time, on standard output. */
export const timestampedLog = (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);

/**
 * On the first SIGINT or SIGTERM: logs it, runs `stop` and exits 0 (1 when stopping failed). Later
 * signals are ignored while stopping is under way.
 */
export function stopOnSignals(stop: (signal: string) => Promise<unknown>, log: (line: string) => void = timestampedLog): void {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stop(signal).then(
      () => process.exit(0),
      (err: unknown) => {
        log(`stop failed: ${(err as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}
