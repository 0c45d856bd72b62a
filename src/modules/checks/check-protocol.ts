// Checks on the device (issue 61): what the server tells an agent to check, and how the agent reports.
// Part of the agent protocol, shared by the server and the reference agent; documented for agent authors
// in docs/agent-protocol.md (section "Checks").
//
// - The server sends an agent its whole effective set with the command `checks_set` when the agent
//   announced the capability `checks` in its hello frame: on every new socket, and whenever a policy, an
//   override or the agent's customer, tags or platform change its set. `version` identifies the set's
//   content; the agent answers `{version}` and keeps the set across restarts.
// - The agent runs each check on its own interval (with jitter) and timeout, and sends `check_results`
//   frames: at once (within a few seconds) for results whose state changed, and every 60 s the rest of
//   the results since its last frame, so perfdata of every run arrives, one frame per minute.
// - States follow the Nagios plugin convention: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
import { z } from 'zod';

export const CHECK_CAPABILITY = 'checks';

/** Most checks one agent's effective set holds, and one policy. */
export const MAX_CHECKS_PER_AGENT = 500;
export const MAX_CHECKS_PER_POLICY = 100;
/** Most characters of a result's output kept (the first line and what follows); plugins' output beyond is cut. */
export const MAX_CHECK_OUTPUT_CHARS = 4096;
/** Most bytes of a plugin's stdout the agent reads; the rest is discarded while the plugin runs on to its end or timeout. */
export const MAX_PLUGIN_OUTPUT_BYTES = 64 * 1024;
/** Most perfdata items one result carries. */
export const MAX_PERFDATA_ITEMS = 50;
/** Most results one check_results frame carries. */
export const MAX_RESULTS_PER_FRAME = 5000;

export const CHECK_STATES = ['ok', 'warning', 'critical', 'unknown'] as const;
export type CheckStateName = (typeof CHECK_STATES)[number];
/** Nagios plugin exit codes: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. */
export const checkStateCode = z.number().int().min(0).max(3);
export type CheckStateCode = 0 | 1 | 2 | 3;

const host = z.string().min(1).max(255);
const percent = z.number().min(0).max(100);
const ms = z.number().int().min(1).max(600_000);

/** Parameters of each kind of check. Thresholds are optional: without one, that level is never reached. */
export const checkParams = {
  /** ICMP echo through the device's ping: loss in percent, round-trip average in milliseconds. */
  ping: z.object({ host, count: z.number().int().min(1).max(20).default(3), warn_loss_percent: percent.optional(), crit_loss_percent: percent.default(100), warn_rtt_ms: ms.optional(), crit_rtt_ms: ms.optional() }),
  /** A TCP connection: CRITICAL when refused or timed out. */
  tcp: z.object({ host, port: z.number().int().min(1).max(65_535), warn_ms: ms.optional(), crit_ms: ms.optional() }),
  /**
   * An HTTP(S) request (GET, no redirects followed): CRITICAL when the status is not `expect_status` (any
   * 2xx or 3xx by default) or the body lacks `body_contains`; certificate days left for https.
   */
  http: z.object({
    url: z.string().url().max(2048).refine((u) => /^https?:\/\//i.test(u), 'http or https URL'),
    expect_status: z.array(z.number().int().min(100).max(599)).max(20).optional(),
    body_contains: z.string().min(1).max(1024).optional(),
    warn_ms: ms.optional(),
    crit_ms: ms.optional(),
    cert_warn_days: z.number().int().min(0).max(3650).optional(),
    cert_crit_days: z.number().int().min(0).max(3650).optional(),
    /** Accept a certificate the device does not trust (its days left are still judged). */
    insecure: z.boolean().default(false),
  }),
  /** A DNS name resolves (through the device's resolver), optionally to one expected address. */
  dns: z.object({ name: host, expect_address: z.string().min(1).max(64).optional() }),
  /** A service of the device's service manager is running (the same backends as the services view). */
  service: z.object({ name: z.string().min(1).max(255) }),
  /** Processes whose name (or, with match "command", command line) contains `pattern`: between min and max of them. */
  process: z.object({ pattern: z.string().min(1).max(255), match: z.enum(['name', 'command']).default('name'), min: z.number().int().min(0).default(1), max: z.number().int().min(0).optional() }),
  /** Used percent of one mount point (a drive letter such as "C:" on Windows). */
  disk: z.object({ mount: z.string().min(1).max(1024), warn_percent: percent.optional(), crit_percent: percent.optional() }),
  /** CPU usage in percent over the check's own short sample. */
  cpu: z.object({ warn_percent: percent.optional(), crit_percent: percent.optional() }),
  /** Memory used in percent. */
  memory: z.object({ warn_percent: percent.optional(), crit_percent: percent.optional() }),
  /**
   * A Nagios-convention plugin: an executable on the device (`command`, an absolute path) with `args`, or
   * a script of the library (the server fills in `script` {shell, body}; the agent runs it from a
   * temporary file). Exit 0 OK, 1 WARNING, 2 CRITICAL, anything else UNKNOWN; the first line of stdout
   * is the output, perfdata after `|`.
   */
  script: z.object({
    command: z.string().min(1).max(4096).optional(),
    script_id: z.number().int().min(1).optional(),
    script: z.object({ shell: z.enum(['sh', 'bash', 'powershell', 'cmd']), body: z.string().min(1).max(1_000_000) }).optional(),
    args: z.array(z.string().max(4096)).max(100).default([]),
  }),
} as const;

export type CheckKind = keyof typeof checkParams;
export const CHECK_KINDS = Object.keys(checkParams) as CheckKind[];

/** One check as the agent receives it: the server has resolved policies, overrides and library scripts. */
export const agentCheckSchema = z.object({
  id: z.string().uuid(),
  name: z.string().min(1).max(255),
  kind: z.enum(CHECK_KINDS as [CheckKind, ...CheckKind[]]),
  params: z.record(z.string(), z.unknown()),
  interval_seconds: z.number().int().min(10).max(86_400),
  timeout_seconds: z.number().int().min(1).max(300),
});
export type AgentCheck = z.infer<typeof agentCheckSchema>;

/** Parameters of the `checks_set` command; answered `{version}`. */
export const checksSetParams = z.object({
  version: z.string().min(1).max(64),
  checks: z.array(agentCheckSchema).max(MAX_CHECKS_PER_AGENT),
});
export type ChecksSet = z.infer<typeof checksSetParams>;

/** One perfdata item (`label=value[UOM];warn;crit;min;max`), the value in the plugin's own unit. */
export const perfdataSchema = z.object({
  label: z.string().min(1).max(128),
  value: z.number(),
  uom: z.string().max(8).default(''),
  warn: z.string().max(64).optional(),
  crit: z.string().max(64).optional(),
  min: z.number().optional(),
  max: z.number().optional(),
});
export type Perfdata = z.infer<typeof perfdataSchema>;

export const checkResultSchema = z.object({
  check_id: z.string().min(1).max(64),
  state: checkStateCode,
  output: z.string().max(MAX_CHECK_OUTPUT_CHARS),
  perfdata: z.array(perfdataSchema).max(MAX_PERFDATA_ITEMS).default([]),
  /** When the run started, RFC 3339. */
  ran_at: z.string().datetime({ offset: true }),
  duration_ms: z.number().int().min(0).max(3_600_000),
});
export type CheckResult = z.infer<typeof checkResultSchema>;

/** Agent → server: results of the set `version`, oldest first. */
export const checkResultsFrameSchema = z.object({
  type: z.literal('check_results'),
  version: z.string().min(1).max(64),
  results: z.array(checkResultSchema).max(MAX_RESULTS_PER_FRAME),
});
export type CheckResultsFrame = z.infer<typeof checkResultsFrameSchema>;
