// Command line of the fleet simulator: `RMM_AGENT_KEY=KEY npm run fleet -- --server URL --agents N --interval S`.
// Runs N simulated agents in this process and prints a progress line every few seconds (registered,
// connected, away, heartbeats and their answer times) until SIGINT/SIGTERM stops them cleanly.
import os from 'node:os';
import path from 'node:path';
import { agentKeyPreferringEnv, argsOrExit, parseOptions, requireServer, stopOnSignals, timestampedLog, UsageError, warnOnStderr } from '../agent/cli-args.js';
import { Fleet, type FleetOptions } from './fleet.js';
import { percentiles } from '../platform/percentiles.js';

const USAGE = `Usage: RMM_AGENT_KEY=KEY npm run fleet -- --server URL [options]

  RMM_AGENT_KEY       agent API key (environment variable; required unless --key is given)
  --server URL        RMM server base URL, e.g. http://localhost:8080 (required)
  --key KEY           agent API key; avoid it: every user of the machine sees it in ps (RMM_AGENT_KEY wins)
  --agents N          number of simulated agents (default 100, at most 20000)
  --interval S        heartbeat interval in seconds (default 60)
  --prefix P          agent names are P-1 … P-N; pre-registered agents of those names are adopted (default sim)
  --state-dir DIR     one state file per agent (default: rmm-fleet-P in the system's temp folder)
  --outage-every S    on average one agent goes away (stale or offline) this often; 0 never (default 10 intervals)
  --verbose           print every agent's log lines
  -h, --help          show this help
`;

const PROGRESS_EVERY_MS = 5000;

function integer(value: string | undefined, fallback: number, min: number, max: number, name: string): number {
  const n = value === undefined ? fallback : Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${name} must be a whole number from ${min} to ${max}`);
  return n;
}

function parseFleetArgs(argv: string[], env: NodeJS.ProcessEnv): FleetOptions | 'help' {
  const values = parseOptions(argv, {
    server: { type: 'string' },
    key: { type: 'string' },
    agents: { type: 'string' },
    interval: { type: 'string' },
    prefix: { type: 'string' },
    'state-dir': { type: 'string' },
    'outage-every': { type: 'string' },
    verbose: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';
  const prefix = values.prefix ?? 'sim';
  if (!/^[A-Za-z0-9._-]{1,40}$/.test(prefix)) throw new UsageError('--prefix must be 1 to 40 letters, digits, dots, dashes or underscores');
  const intervalS = integer(values.interval, 60, 1, 86_400, '--interval');
  return {
    serverUrl: requireServer(values.server),
    apiKey: agentKeyPreferringEnv(values.key, env, warnOnStderr),
    agents: integer(values.agents, 100, 1, 20_000, '--agents'),
    intervalMs: intervalS * 1000,
    namePrefix: prefix,
    stateDir: path.resolve(values['state-dir'] ?? path.join(os.tmpdir(), `rmm-fleet-${prefix}`)),
    outageEveryMs: integer(values['outage-every'], intervalS * 10, 0, 86_400, '--outage-every') * 1000,
    ...(values.verbose ? { log: timestampedLog } : {}),
  };
}

async function main(): Promise<void> {
  const options = await argsOrExit(() => parseFleetArgs(process.argv.slice(2), process.env), USAGE);
  if (!options) return;
  const fleet = new Fleet(options);
  const progress = setInterval(() => {
    const s = fleet.stats;
    const latencies = fleet.takeLatencies();
    const { p50, p99 } = percentiles(latencies);
    const times = latencies.length > 0 ? `, answered in p50 ${p50.toFixed(1)} / p99 ${p99.toFixed(1)} ms` : '';
    timestampedLog(`${s.registered}/${s.agents} registered, ${s.connected} connected, ${s.away} away; heartbeats ${s.heartbeatsOk} ok, ${s.heartbeatsFailed} failed${times}`);
  }, PROGRESS_EVERY_MS);
  stopOnSignals((signal) => {
    clearInterval(progress);
    timestampedLog(`${signal} received, stopping ${fleet.members.length} agents`);
    return fleet.stop();
  });
  timestampedLog(`fleet starting: ${options.agents} agents against ${options.serverUrl}, heartbeat every ${options.intervalMs / 1000} s, state in ${options.stateDir}`);
  await fleet.start();
  timestampedLog('all agents started');
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error).message}\n`);
  process.exit(1);
});
