// One run of one check: its params checked against the protocol's schema of its kind, the kind's runner
// from a strategy table, the timeout, and the result as check_results carries it. A run never rejects:
// whatever goes wrong is the result's UNKNOWN with the reason, so a broken check cannot stop the others.
import path from 'node:path';
import { checkParams, MAX_CHECK_OUTPUT_CHARS, MAX_PERFDATA_ITEMS, type AgentCheck, type CheckKind, type CheckResult, type Perfdata } from '../../modules/checks/check-protocol.js';
import { cpuCheck, diskCheck, memoryCheck, processCheck, serviceCheck } from './device-checks.js';
import { cutOutput, UNKNOWN, type CheckOutcome } from './nagios-output.js';
import { dnsCheck, httpCheck, pingCheck, tcpCheck, type CheckContext } from './network-checks.js';
import { runPlugin, runScript, TIMED_OUT } from './plugin-runner.js';
import { outcome } from './thresholds.js';

type Runner = (params: never, ctx: CheckContext) => Promise<CheckOutcome>;

const RUNNERS: Record<CheckKind, Runner> = {
  ping: pingCheck,
  tcp: tcpCheck,
  http: httpCheck,
  dns: dnsCheck,
  service: serviceCheck,
  process: processCheck,
  disk: diskCheck,
  cpu: cpuCheck,
  memory: memoryCheck,
  script: scriptCheck,
};

/** A plugin's own timeout kills it (and reports so) a moment before the run's last-resort timeout. */
const SAFETY_MARGIN_MS = 5000;

/** Runs `check` once; `signal` (the check removed, the agent stopping) ends it early. */
export async function runCheck(check: AgentCheck, signal?: AbortSignal): Promise<CheckResult> {
  const ranAt = new Date();
  const started = performance.now();
  const timeoutMs = check.timeout_seconds * 1000;
  const result = await outcomeOf(check, timeoutMs, signal).catch((err: unknown) => outcome('CHECK', UNKNOWN, `the check failed: ${(err as Error).message}`));
  return checkResult(check, result, ranAt, performance.now() - started);
}

/** A run's outcome as check_results carries it, within the protocol's limits (also the fleet's simulated runs). */
export function checkResult(check: AgentCheck, result: CheckOutcome, ranAt: Date, durationMs: number): CheckResult {
  return {
    check_id: check.id,
    state: result.state,
    output: cutOutput(result.output, MAX_CHECK_OUTPUT_CHARS),
    perfdata: fitPerfdata(result.perfdata),
    ran_at: ranAt.toISOString(),
    duration_ms: Math.min(3_600_000, Math.max(0, Math.round(durationMs))),
  };
}

/**
 * Perfdata within the protocol's limits, whoever made it: a disk check's label is its mount (up to
 * 1,024 characters), and one item out of bounds would make the server drop the whole frame.
 */
function fitPerfdata(items: Perfdata[]): Perfdata[] {
  return items
    .filter((p) => p.label.length > 0 && Number.isFinite(p.value))
    .slice(0, MAX_PERFDATA_ITEMS)
    .map((p) => {
      const item: Perfdata = { label: p.label.slice(0, 128), value: p.value, uom: p.uom.slice(0, 8) };
      if (p.warn !== undefined) item.warn = p.warn.slice(0, 64);
      if (p.crit !== undefined) item.crit = p.crit.slice(0, 64);
      if (p.min !== undefined && Number.isFinite(p.min)) item.min = p.min;
      if (p.max !== undefined && Number.isFinite(p.max)) item.max = p.max;
      return item;
    });
}

async function outcomeOf(check: AgentCheck, timeoutMs: number, outer?: AbortSignal): Promise<CheckOutcome> {
  const parsed = checkParams[check.kind].safeParse(check.params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return outcome('CHECK', UNKNOWN, `invalid params for a ${check.kind} check: ${issue?.path.join('.') || 'params'}: ${issue?.message ?? 'invalid'}`);
  }
  const abort = new AbortController();
  const onOuter = () => abort.abort();
  outer?.addEventListener('abort', onOuter, { once: true });
  if (outer?.aborted) abort.abort();
  const timer = setTimeout(() => abort.abort(TIMED_OUT), timeoutMs);
  let safety: NodeJS.Timeout | undefined;
  // The last resort, should a runner not end at its signal: the run is over, whatever it left behind.
  const lastResort = new Promise<CheckOutcome>((resolve) => {
    safety = setTimeout(() => resolve(outcome('CHECK', UNKNOWN, `timed out after ${check.timeout_seconds} s`)), timeoutMs + SAFETY_MARGIN_MS);
  });
  try {
    const run = (RUNNERS[check.kind] as (params: unknown, ctx: CheckContext) => Promise<CheckOutcome>)(parsed.data, { timeoutMs, signal: abort.signal });
    return await Promise.race([run, lastResort]);
  } finally {
    clearTimeout(timer);
    clearTimeout(safety);
    outer?.removeEventListener('abort', onOuter);
  }
}

async function scriptCheck(p: { command?: string | undefined; script?: { shell: 'sh' | 'bash' | 'powershell' | 'cmd'; body: string } | undefined; args: string[] }, ctx: CheckContext): Promise<CheckOutcome> {
  if (p.script) return runScript(p.script.shell, p.script.body, p.args, ctx.timeoutMs, ctx.signal);
  // The protocol's command is an absolute path: a bare name would be looked up in the agent's PATH.
  if (p.command && !path.isAbsolute(p.command)) return outcome('CHECK', UNKNOWN, `the command must be an absolute path, not ${JSON.stringify(p.command.slice(0, 200))}`);
  if (p.command) return runPlugin({ file: p.command, args: p.args, timeoutMs: ctx.timeoutMs, signal: ctx.signal });
  return outcome('CHECK', UNKNOWN, 'a script check needs a command or a script');
}
