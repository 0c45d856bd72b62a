// Command line of the reference agent: `RMM_AGENT_KEY=KEY npm run agent -- --server URL [--name N] ...`.
// Parses and checks the arguments (exit 2 with the usage on a bad one), runs one ReferenceAgent, prints
// one line per important event and stops cleanly on SIGINT/SIGTERM.
import path from 'node:path';
import type { Platform } from './device-state.js';
import { defaultPlatform, ReferenceAgent, type ReferenceAgentOptions } from './reference-agent.js';
import { agentKeyPreferringEnv, argsOrExit, checkAgentId, parseOptions, requireServer, stopOnSignals, timestampedLog, UsageError, warnOnStderr } from './cli-args.js';

const USAGE = `Usage: RMM_AGENT_KEY=KEY npm run agent -- --server URL [options]

  RMM_AGENT_KEY        agent API key (environment variable; required unless --key is given)
  --server URL         RMM server base URL, e.g. http://localhost:8080 (required)
  --key KEY            agent API key; avoid it: every user of the machine sees it in ps (RMM_AGENT_KEY wins)
  --binary PATH        the installed agent file (the updater's --binary); its SHA-256 goes with every
                       heartbeat, so the server sees when a requested update is installed (default: the
                       agent's entry file, ${defaultBinary()})
  --name N             agent name (adopts a pre-registered agent of that name)
  --agent-id ID        reuse this agent id (16-64 hex characters)
  --interval S         heartbeat interval in seconds (default 60)
  --state FILE         simulated device state and remembered agent id (default ./agent-state.json);
                       the last check set is kept beside it (agent-state.checks.json)
  --backup-file F      file the backup command returns (default: the bundled sample config.xml)
  --platform P         freebsd, linux or windows (default: this machine's, ${defaultPlatform()})
  -h, --help           show this help
`;

/**
 * The file the agent runs from: the entry script node was given (src/agent/main.ts under tsx, a bundle's
 * file), or node's own executable when there is none (a single-executable build, where that is the agent).
 */
function defaultBinary(): string {
  return process.argv[1] ? path.resolve(process.argv[1]) : process.execPath;
}

function parseAgentArgs(argv: string[], env: NodeJS.ProcessEnv): ReferenceAgentOptions | 'help' {
  const values = parseOptions(argv, {
    server: { type: 'string' },
    key: { type: 'string' },
    binary: { type: 'string' },
    name: { type: 'string' },
    'agent-id': { type: 'string' },
    interval: { type: 'string' },
    state: { type: 'string' },
    'backup-file': { type: 'string' },
    platform: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';

  const server = requireServer(values.server);
  const key = agentKeyPreferringEnv(values.key, env, warnOnStderr);
  const agentId = checkAgentId(values['agent-id']);
  const interval = values.interval === undefined ? 60 : Number(values.interval);
  if (!Number.isFinite(interval) || interval < 1 || interval > 86_400) throw new UsageError('--interval must be a number of seconds from 1 to 86400');
  const platform = values.platform ?? defaultPlatform();
  if (!['freebsd', 'linux', 'windows'].includes(platform)) throw new UsageError('--platform must be freebsd, linux or windows');
  if (values.name !== undefined && values.name.trim() === '') throw new UsageError('--name must not be empty');
  if (values.binary !== undefined && values.binary.trim() === '') throw new UsageError('--binary must not be empty');

  return {
    serverUrl: server,
    apiKey: key,
    stateFile: path.resolve(values.state ?? 'agent-state.json'),
    binaryPath: values.binary !== undefined ? path.resolve(values.binary) : defaultBinary(),
    platform: platform as Platform,
    heartbeatIntervalMs: Math.round(interval * 1000),
    ...(values.name !== undefined ? { name: values.name.trim() } : {}),
    ...(agentId !== undefined ? { agentId } : {}),
    ...(values['backup-file'] !== undefined ? { backupFile: path.resolve(values['backup-file']) } : {}),
  };
}

async function main(): Promise<void> {
  const options = await argsOrExit(() => parseAgentArgs(process.argv.slice(2), process.env), USAGE);
  if (!options) return;
  const log = timestampedLog;
  const agent = new ReferenceAgent({ ...options, log });
  stopOnSignals((signal) => {
    log(`${signal} received, stopping`);
    return agent.stop();
  }, log);

  log(`reference agent starting: server ${options.serverUrl}, platform ${options.platform}, state ${options.stateFile}, binary ${options.binaryPath}`);
  await agent.start();
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error).message}\n`);
  process.exit(1);
});
