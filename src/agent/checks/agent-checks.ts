// The checks of one reference agent: the set (persisted, loaded at start), its scheduler and its
// reporter, and the `checks_set` command. The command is answered here rather than from the command
// table: the table holds the commands of agent-protocol.ts, and checks_set belongs to check-protocol.ts.
import { commandFrameSchema, parseFrame } from '../../modules/agent-hub/agent-protocol.js';
import type { DispatchResult } from '../commands/index.js';
import { CHECK_CAPABILITY, checksSetParams, type AgentCheck, type ChecksSet, type CheckResult } from '../../modules/checks/check-protocol.js';
import { CheckReporter } from './check-reporter.js';
import { CheckScheduler, type CheckSchedulerOptions } from './check-scheduler.js';
import { CheckStore } from './check-store.js';
import { runCheck } from './run-check.js';

export { CHECK_CAPABILITY };

/** What a reference agent's owner may tune (ReferenceAgentOptions.checks). */
export interface AgentChecksSettings {
  /**
   * Where the last set is kept; default `<state file name>.checks.json` next to the state file. null:
   * in memory only (the fleet simulator's agents: 10,000 files written at each policy change would
   * measure the simulator's disk, and the server sends the set again on every new socket anyway).
   */
  file?: string | null;
  /** How soon a changed state is sent; default 2000 ms. */
  changeReportDelayMs?: number;
  /** How often the other results are sent; default 60 000 ms. */
  reportIntervalMs?: number;
  /** Most checks running at once; default 4. */
  maxConcurrentChecks?: number;
  /** A check's first run comes within this long at most (and within a quarter of its interval); default 60 000 ms. */
  firstRunMaxDelayMs?: number;
  /**
   * Runs one check; default the real runner (run-check.ts). The fleet simulator's agents give one that
   * reads their simulated device, so the scheduling and reporting stay the reference agent's own.
   */
  runCheck?: CheckSchedulerOptions['run'];
  /** Draws of the first runs' delays and the intervals' jitter; default Math.random. */
  random?: CheckSchedulerOptions['random'];
}

export interface AgentChecksOptions extends AgentChecksSettings {
  file: string | null;
  send: (text: string) => boolean;
  log?: (line: string) => void;
  /** Every result as it is produced (tests and the agent's `check_result` event). */
  onResult?: (check: AgentCheck, result: CheckResult) => void;
}

const STOP_WAIT_MS = 10_000;

/** The answer to checks_set, as the command table's dispatcher gives its answers. */
type Answered = Extract<DispatchResult, { kind: 'answer' }>;


export class AgentChecks {
  private readonly store: CheckStore | null;
  private readonly scheduler: CheckScheduler;
  private readonly reporter: CheckReporter;
  private readonly log: (line: string) => void;
  private set: ChecksSet | null = null;

  constructor(options: AgentChecksOptions) {
    this.log = options.log ?? (() => undefined);
    this.store = options.file === null ? null : new CheckStore(options.file);
    this.reporter = new CheckReporter({
      send: options.send,
      log: this.log,
      ...(options.changeReportDelayMs !== undefined ? { changeDelayMs: options.changeReportDelayMs } : {}),
      ...(options.reportIntervalMs !== undefined ? { reportIntervalMs: options.reportIntervalMs } : {}),
      ...(options.random ? { random: options.random } : {}),
    });
    this.scheduler = new CheckScheduler({
      run: options.runCheck ?? runCheck,
      onResult: (check, result) => {
        this.reporter.add(result);
        options.onResult?.(check, result);
      },
      ...(options.maxConcurrentChecks !== undefined ? { concurrency: options.maxConcurrentChecks } : {}),
      ...(options.firstRunMaxDelayMs !== undefined ? { firstRunMaxDelayMs: options.firstRunMaxDelayMs } : {}),
      ...(options.random ? { random: options.random } : {}),
    });
  }

  /** The set running now. */
  get current(): ChecksSet | null {
    return this.set;
  }

  get file(): string | null {
    return this.store?.file ?? null;
  }

  /** Runs the persisted set, if any: checks run across restarts before the server is reached. */
  async start(): Promise<void> {
    if (!this.store) return;
    const saved = await this.store.load(this.log);
    if (!saved || this.set) return;
    this.use(saved);
    this.log(`checks: ${saved.checks.length} checks of set ${saved.version} loaded from ${this.store.file}`);
  }

  /** Makes `set` the current one and persists it; answers its version. */
  async apply(set: ChecksSet): Promise<{ version: string }> {
    const same = this.set !== null && JSON.stringify(this.set) === JSON.stringify(set);
    const change = this.use(set);
    this.log(`checks: set ${set.version}: ${change.started.length} started, ${change.stopped.length} stopped, ${change.kept.length} kept`);
    if (!same && this.store) {
      const store = this.store;
      // A set that cannot be written still runs now; it is only lost at the next restart.
      await store.save(set).catch((err: unknown) => this.log(`checks: cannot save the set to ${store.file}: ${(err as Error).message}`));
    }
    return { version: set.version };
  }

  /**
   * The answer when `text` is a checks_set command frame, else null (the command table's then).
   * A malformed set is refused and the current one stays.
   */
  async handleText(text: string): Promise<Answered | null> {
    if (!text.includes('"checks_set"')) return null; // most frames: no JSON parse twice
    const parsed = parseFrame(commandFrameSchema, text);
    if (!parsed.ok || parsed.frame.command !== 'checks_set') return null;
    const { id, params } = parsed.frame;
    const set = checksSetParams.safeParse(params);
    let frame: Answered['frame'];
    if (!set.success) {
      const issue = set.error.issues[0];
      frame = { type: 'response', id, success: false, error: `invalid params for checks_set: ${issue?.path.join('.') || 'params'}: ${issue?.message ?? 'invalid'}` };
    } else {
      const duplicate = firstDuplicate(set.data.checks.map((c) => c.id));
      frame = duplicate
        ? { type: 'response', id, success: false, error: `invalid params for checks_set: check id ${duplicate} appears twice` }
        : { type: 'response', id, success: true, data: await this.apply(set.data) };
    }
    return { kind: 'answer', command: 'checks_set', frame, text: JSON.stringify(frame) };
  }

  /** The socket is open: results that waited go out. */
  connected(): void {
    this.reporter.connected();
  }

  /**
   * Stops every check (running plugins are killed) and the reporting; waits for the set's file. A
   * built-in check without a signal to heed (a service manager that hangs) is not waited for longer
   * than STOP_WAIT_MS: it ends on its own tool's timeout and nothing is scheduled after it.
   */
  async stop(): Promise<void> {
    this.reporter.stop();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.scheduler.stop(), new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(timer);
    await this.store?.flush();
  }

  private use(set: ChecksSet): ReturnType<CheckScheduler['replace']> {
    this.set = set;
    const ids = set.checks.map((c) => c.id);
    this.reporter.setVersion(set.version, ids);
    const change = this.scheduler.replace(set.checks);
    this.reporter.forget(change.started);
    return change;
  }
}

function firstDuplicate(ids: string[]): string | null {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return null;
}
