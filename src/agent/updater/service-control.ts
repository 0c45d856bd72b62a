// How the updater stops and starts the agent it replaces: one small strategy per kind of service
// manager (systemd, FreeBSD rc.d, a command template, or the updater itself as the parent process).
// Commands run through execFile with an argument list, never a shell, so a unit name or template can
// never smuggle in shell syntax.
import { execFile, spawn, type ChildProcess, type StdioOptions } from 'node:child_process';

export interface ServiceControl {
  stop(): Promise<void>;
  start(): Promise<void>;
  isRunning(): Promise<boolean>;
  /** For log lines: "systemd unit rmm-agent", "child process /usr/local/bin/rmm-agent", ... */
  readonly description: string;
}

export type ServiceAction = 'start' | 'stop' | 'status';

const COMMAND_TIMEOUT_MS = 120_000;

interface CommandResult {
  code: number;
  output: string;
}

/** Runs argv[0] with the rest as arguments; resolves with the exit code (non-zero is not an error here). */
function run(argv: readonly string[]): Promise<CommandResult> {
  const [file, ...args] = argv;
  return new Promise((resolve, reject) => {
    execFile(file!, args, { timeout: COMMAND_TIMEOUT_MS, windowsHide: true }, (err, stdout, stderr) => {
      const output = `${stdout}${stderr}`.trim().slice(0, 500);
      if (!err) return resolve({ code: 0, output });
      const code = (err as { code?: unknown }).code;
      // A numeric code is the command's exit status; a string code (ENOENT, EACCES) means it never ran.
      if (typeof code === 'number') return resolve({ code, output });
      if ((err as { killed?: boolean }).killed) return reject(new Error(`${argv.join(' ')}: no answer within ${COMMAND_TIMEOUT_MS / 1000} s`));
      reject(new Error(`${argv.join(' ')}: ${err.message}`));
    });
  });
}

/**
 * A service driven by one command whose arguments contain `{action}`; `words` maps each action to the
 * word the service manager expects (systemd says `is-active` where rc.d says `status`).
 */
export class CommandService implements ServiceControl {
  constructor(
    private readonly template: readonly string[],
    readonly description: string,
    private readonly words: Record<ServiceAction, string> = { start: 'start', stop: 'stop', status: 'status' },
  ) {
    if (template.length === 0 || !template.some((arg) => arg.includes('{action}'))) {
      throw new Error('a service command needs a program and an {action} placeholder');
    }
  }

  async start(): Promise<void> {
    await this.mustSucceed('start');
  }

  async stop(): Promise<void> {
    await this.mustSucceed('stop');
  }

  /** Exit status 0 means running: both `systemctl is-active` and `service <name> status` follow that rule. */
  async isRunning(): Promise<boolean> {
    return (await run(this.argvFor('status'))).code === 0;
  }

  private async mustSucceed(action: ServiceAction): Promise<void> {
    const argv = this.argvFor(action);
    const { code, output } = await run(argv);
    if (code !== 0) throw new Error(`${argv.join(' ')} exited with ${code}${output ? `: ${output}` : ''}`);
  }

  private argvFor(action: ServiceAction): string[] {
    return this.template.map((arg) => arg.replaceAll('{action}', this.words[action]));
  }
}

export class SystemdService extends CommandService {
  constructor(unit: string) {
    super(['systemctl', '{action}', unit], `systemd unit ${unit}`, { start: 'start', stop: 'stop', status: 'is-active' });
  }
}

/** FreeBSD rc.d (and any `service` wrapper): `service <name> start|stop|status`. */
export class RcService extends CommandService {
  constructor(name: string) {
    super(['service', name, '{action}'], `rc.d service ${name}`);
  }
}

/**
 * `--service-cmd "systemctl {action} rmm-agent"`: split on whitespace, nothing else. No quoting, no
 * variables, no globbing: a word is passed exactly as written, so there is no shell to inject into.
 */
export function parseServiceCommand(template: string): CommandService {
  const argv = template.trim().split(/\s+/).filter((word) => word !== '');
  if (argv.length === 0) throw new Error('--service-cmd is empty');
  if (argv[0]!.includes('{action}')) throw new Error('--service-cmd must start with a program, not {action}');
  if (!argv.some((word) => word.includes('{action}'))) throw new Error('--service-cmd needs an {action} placeholder (start, stop or status)');
  return new CommandService(argv, `command "${argv.join(' ')}"`);
}

export interface PlainProcessOptions {
  /** How long stop() waits after SIGTERM before SIGKILL. */
  graceMs?: number;
  stdio?: StdioOptions;
  log?: (line: string) => void;
}

/** No service manager: the updater itself runs the agent as its child process. */
export class PlainProcess implements ServiceControl {
  readonly description: string;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private readonly graceMs: number;
  private readonly log: (line: string) => void;

  constructor(
    private readonly binaryPath: string,
    private readonly args: readonly string[] = [],
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly options: PlainProcessOptions = {},
  ) {
    this.description = `child process ${binaryPath}`;
    this.graceMs = options.graceMs ?? 10_000;
    this.log = options.log ?? (() => undefined);
  }

  /** Process id of the running child, for logs and tests. */
  get pid(): number | undefined {
    return this.alive() ? this.child?.pid : undefined;
  }

  async start(): Promise<void> {
    if (this.alive()) return;
    const child = spawn(this.binaryPath, [...this.args], { env: this.env, stdio: this.options.stdio ?? 'inherit', windowsHide: true });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.log(`agent process ${child.pid ?? '?'} exited (${signal ?? `code ${code}`})`);
        resolve();
      });
      // A child that never started emits 'error' and no 'exit'.
      child.once('error', () => resolve());
    });
    // spawn() reports ENOENT/EACCES asynchronously; start() only succeeds once the process exists.
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => reject(new Error(`cannot start ${this.binaryPath}: ${err.message}`)));
    });
    this.log(`agent process ${child.pid} started`);
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.alive()) return;
    child.kill('SIGTERM');
    const inTime = await Promise.race([this.exited.then(() => true), delay(this.graceMs).then(() => false)]);
    if (!inTime) {
      this.log(`agent process ${child.pid} ignored SIGTERM for ${this.graceMs} ms, killing it`);
      child.kill('SIGKILL');
      await this.exited;
    }
  }

  async isRunning(): Promise<boolean> {
    return this.alive();
  }

  /** Synchronous last resort for process 'exit' handlers: the agent must not outlive its parent. */
  killNow(): void {
    if (this.alive()) this.child?.kill('SIGKILL');
  }

  private alive(): boolean {
    return this.child !== null && this.child.pid !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
