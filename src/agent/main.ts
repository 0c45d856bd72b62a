// Command line of the reference agent: `npm run agent -- --server URL --key KEY [--name N] ...`. Parses
// and checks the arguments (exit 2 with the usage on a bad one), runs one ReferenceAgent, prints one
// line per important event and stops cleanly on SIGINT/SIGTERM.
import path from 'node:path';
import type { Platform } from './device-state.js';
import { defaultPlatform, ReferenceAgent, type ReferenceAgentOptions } from './reference-agent.js';
import { argsOrExit, checkAgentId, parseOptions, requireAgentKey, requireServer, stopOnSignals, timestampedLog, UsageError } from './cli-args.js';

const USAGE = `Usage: npm run agent -- --server URL --key KEY [options]

  --server URL         RMM server base URL, e.g. http://localhost:8080 (required)
  --key KEY            agent API key (required; or environment variable RMM_AGENT_KEY)
  --name N             agent name (adopts a pre-registered agent of that name)
  --agent-id ID        reuse this agent id (16-64 hex characters)
  --interval S         heartbeat interval in seconds (default 60)
  --state FILE         simulated device state and remembered agent id (default ./agent-state.json)
  --backup-file F      file the backup command returns (default: the bundled sample config.xml)
  --platform P         freebsd, linux or windows (default: this machine's, ${defaultPlatform()})
  -h, --help           show this help
`;

function parseAgentArgs(argv: string[], env: NodeJS.ProcessEnv): ReferenceAgentOptions | 'help' {
  const values = parseOptions(argv, {
    server: { type: 'string' },
    key: { type: 'string' },
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
  const key = requireAgentKey(values.key, env);
  const agentId = checkAgentId(values['agent-id']);
  const interval = values.interval === undefined ? 60 : Number(values.interval);
  if (!Number.isFinite(interval) || interval < 1 || interval > 86_400) throw new UsageError('--interval must be a number of seconds from 1 to 86400');
  const platform = values.platform ?? defaultPlatform();
  if (!['freebsd', 'linux', 'windows'].includes(platform)) throw new UsageError('--platform must be freebsd, linux or windows');
  if (values.name !== undefined && values.name.trim() === '') throw new UsageError('--name must not be empty');

  return {
    serverUrl: server,
    apiKey: key,
    stateFile: path.resolve(values.state ?? 'agent-state.json'),
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

  log(`reference agent starting: server ${options.serverUrl}, platform ${options.platform}, state ${options.stateFile}`);
  await agent.start();
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error).message}\n`);
  process.exit(1);
});
