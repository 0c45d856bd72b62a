// Command line of the on-device updater: `RMM_AGENT_KEY=KEY npm run updater -- --server URL --agent-id ID --binary
// PATH [...] [-- agent args]`. Parses and checks the arguments (exit 2 with the usage on a bad one), picks
// how the agent is stopped and started, polls until SIGINT/SIGTERM. With the plain strategy the updater
// is the agent's parent: it starts the agent first and stops it when it stops itself.
import type { KeyObject } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parsePublicKey } from '../../modules/firmware/firmware-signature.js';
import type { Platform } from '../device-state.js';
import { agentKeyPreferringEnv, argsOrExit, checkAgentId, parseOptions, requireServer, stopOnSignals, timestampedLog, UsageError, warnOnStderr } from '../cli-args.js';
import { parseServiceCommand, PlainProcess, RcService, SystemdService, type ServiceControl } from './service-control.js';
import { Updater } from './updater.js';

const USAGE = `Usage: RMM_AGENT_KEY=KEY npm run updater -- --server URL --agent-id ID --binary PATH [options] [-- agent args...]

  --server URL           RMM server base URL, e.g. http://localhost:8080 (required)
  --key KEY              agent API key, if RMM_AGENT_KEY is not set (every user of the machine sees it in ps)
  --agent-id ID          id of the agent this updater looks after (16-64 hex characters, required)
  --binary PATH          the installed agent binary that gets replaced (required)
  --service S            how the agent is stopped and started (default plain):
                           plain          the updater runs the binary itself, with the agent args after --
                           systemd:UNIT   systemctl stop|start|is-active UNIT
                           rc:NAME        service NAME stop|start|status (FreeBSD rc.d)
  --service-cmd "CMD"    instead of --service: a command with {action} (start, stop or status), run
                         without a shell, e.g. "systemctl {action} rmm-agent"; status exit 0 = running
  --platform P           firmware platform: freebsd, linux or windows (default: the agent's, from the server)
  --interval S           seconds between polls (default 60)
  --health-timeout S     seconds a new binary has to get its first heartbeat to the server (default 180)
  --health-window S      seconds it must then keep heartbeating and running to be kept (default 300)
  --heartbeat-gap S      longest pause between its heartbeats within the window (default 150: 2.5 x
                         the agent's 60 s interval; raise it for agents that heartbeat less often)
                         Time in which the server cannot be reached does not count: the wait is extended.
  --public-key KEY       Ed25519 public key (base64 of the raw 32 bytes, as \`npm run cli -- firmware sign\`
                         prints it; or environment variable RMM_FIRMWARE_PUBLIC_KEY): firmware without a
                         signature that verifies with it is refused
  --public-key-file F    the same key read from a file (base64, or a PEM public key)
  -h, --help             show this help
`;

interface UpdaterArgs {
  serverUrl: string;
  apiKey: string;
  agentId: string;
  binaryPath: string;
  platform?: Platform;
  pollIntervalMs: number;
  healthTimeoutMs: number;
  healthWindowMs: number;
  heartbeatGapMs: number;
  publicKey: KeyObject | null;
  /** Builds the strategy; `log` goes to the plain child's exit messages. */
  service: (log: (line: string) => void) => ServiceControl;
}

function seconds(value: string | undefined, fallback: number, name: string, max: number): number {
  const n = value === undefined ? fallback : Number(value);
  if (!Number.isFinite(n) || n < 1 || n > max) throw new UsageError(`${name} must be a number of seconds from 1 to ${max}`);
  return Math.round(n * 1000);
}

function serviceOf(values: { service?: string; 'service-cmd'?: string }, binaryPath: string, agentArgs: string[]): UpdaterArgs['service'] {
  if (values.service !== undefined && values['service-cmd'] !== undefined) throw new UsageError('use either --service or --service-cmd, not both');
  const service = values.service ?? 'plain';
  if (agentArgs.length > 0 && (service !== 'plain' || values['service-cmd'] !== undefined)) {
    throw new UsageError('agent arguments after -- only apply to --service plain');
  }
  if (values['service-cmd'] !== undefined) {
    let strategy: ServiceControl;
    try {
      strategy = parseServiceCommand(values['service-cmd']);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    return () => strategy;
  }
  if (service === 'plain') return (log) => new PlainProcess(binaryPath, agentArgs, process.env, { log });
  const colon = service.indexOf(':');
  const kind = colon === -1 ? service : service.slice(0, colon);
  const name = colon === -1 ? '' : service.slice(colon + 1);
  if (kind !== 'systemd' && kind !== 'rc') throw new UsageError('--service must be plain, systemd:UNIT or rc:NAME');
  // The name becomes one argument of systemctl/service; refusing option-like and odd names keeps it one.
  if (!/^[A-Za-z0-9@._:-]{1,128}$/.test(name) || name.startsWith('-')) throw new UsageError(`--service ${service}: not a valid service name`);
  return kind === 'systemd' ? () => new SystemdService(name) : () => new RcService(name);
}

/** --public-key, --public-key-file or RMM_FIRMWARE_PUBLIC_KEY; null when none is given. */
async function publicKeyOf(values: { 'public-key'?: string; 'public-key-file'?: string }, env: NodeJS.ProcessEnv): Promise<KeyObject | null> {
  if (values['public-key'] !== undefined && values['public-key-file'] !== undefined) throw new UsageError('use either --public-key or --public-key-file, not both');
  let text = values['public-key'] ?? env.RMM_FIRMWARE_PUBLIC_KEY;
  let from = values['public-key'] !== undefined ? '--public-key' : 'RMM_FIRMWARE_PUBLIC_KEY';
  if (values['public-key-file'] !== undefined) {
    from = `--public-key-file ${values['public-key-file']}`;
    text = await readFile(values['public-key-file'], 'utf8').catch((err: Error) => {
      throw new UsageError(`${from}: ${err.message}`);
    });
  }
  if (text === undefined || text === '') return null;
  try {
    return parsePublicKey(text);
  } catch (err) {
    throw new UsageError(`${from}: ${(err as Error).message}`);
  }
}

async function parseUpdaterArgs(argv: string[], env: NodeJS.ProcessEnv): Promise<UpdaterArgs | 'help'> {
  // Everything after the first `--` belongs to the agent, untouched.
  const split = argv.indexOf('--');
  const own = split === -1 ? argv : argv.slice(0, split);
  const agentArgs = split === -1 ? [] : argv.slice(split + 1);
  const values = parseOptions(own, {
    server: { type: 'string' },
    key: { type: 'string' },
    'agent-id': { type: 'string' },
    binary: { type: 'string' },
    service: { type: 'string' },
    'service-cmd': { type: 'string' },
    platform: { type: 'string' },
    interval: { type: 'string' },
    'health-timeout': { type: 'string' },
    'health-window': { type: 'string' },
    'heartbeat-gap': { type: 'string' },
    'public-key': { type: 'string' },
    'public-key-file': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';

  const server = requireServer(values.server);
  const key = agentKeyPreferringEnv(values.key, env, warnOnStderr);
  const agentId = checkAgentId(values['agent-id']);
  if (!agentId) throw new UsageError('--agent-id is required');
  if (!values.binary) throw new UsageError('--binary is required');
  const binaryPath = path.resolve(values.binary);
  const platform = values.platform;
  if (platform !== undefined && !['freebsd', 'linux', 'windows'].includes(platform)) throw new UsageError('--platform must be freebsd, linux or windows');

  return {
    serverUrl: server,
    apiKey: key,
    agentId,
    binaryPath,
    ...(platform !== undefined ? { platform: platform as Platform } : {}),
    pollIntervalMs: seconds(values.interval, 60, '--interval', 86_400),
    healthTimeoutMs: seconds(values['health-timeout'], 180, '--health-timeout', 3_600),
    healthWindowMs: seconds(values['health-window'], 300, '--health-window', 86_400),
    heartbeatGapMs: seconds(values['heartbeat-gap'], 150, '--heartbeat-gap', 86_400),
    publicKey: await publicKeyOf(values, env),
    service: serviceOf(values, binaryPath, agentArgs),
  };
}

async function main(): Promise<void> {
  const args = await argsOrExit(async () => {
    const parsed = await parseUpdaterArgs(process.argv.slice(2), process.env);
    if (parsed !== 'help') {
      const info = await stat(parsed.binaryPath).catch(() => undefined);
      if (!info?.isFile()) throw new UsageError(`--binary ${parsed.binaryPath} is not a file`);
    }
    return parsed;
  }, USAGE);
  if (!args) return;
  const log = timestampedLog;
  const service = args.service(log);
  const updater = new Updater({ ...args, service, log });
  const plain = service instanceof PlainProcess ? service : null;
  // Even on a crash, a child agent must not outlive the updater that supervises it.
  if (plain) process.on('exit', () => plain.killNow());

  stopOnSignals(async (signal) => {
    log(`${signal} received, stopping`);
    await updater.stop();
    await plain?.stop();
  }, log);

  log(
    `updater starting: server ${args.serverUrl}, agent ${args.agentId}, binary ${args.binaryPath}, ${service.description}; ` +
      `health: first heartbeat within ${args.healthTimeoutMs / 1000} s, then ${args.healthWindowMs / 1000} s without a gap over ${args.heartbeatGapMs / 1000} s`,
  );
  // A binary that cannot start is the updater's business (a recorded update is rolled back), not a crash.
  if (plain) await plain.start().catch((err: Error) => log(`the agent did not start: ${err.message}`));
  await updater.run();
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error).message}\n`);
  process.exit(1);
});
