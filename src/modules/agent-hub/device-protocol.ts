// Hands on the device (issue 59): the agent commands for a shell, files, processes and services, the
// frames that end a stream, and the capabilities an agent announces. Part of the agent protocol
// (agent-protocol.ts merges these commands into its table); documented for agent authors in
// docs/agent-protocol.md. Streams (a shell's bytes, a file read or written) use the tunnels' binary
// framing (one byte of session-id length, the id, the bytes) and their flow control: the server asks the
// agent to stop and restart reading a session's source with tunnel_pause / tunnel_resume, whatever the
// session's kind.
import { z } from 'zod';

const sessionId = z.string().min(1).max(255);
/** A path on the device: absolute, no NUL byte (the agent refuses traversal outside what it may touch). */
const devicePath = z.string().min(1).max(4096);
const environment = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).max(255), z.string().max(4096));

/** What an agent can do beyond the spec's commands, announced in its `hello` frame. */
export const DEVICE_CAPABILITIES = ['shell', 'files', 'processes', 'services', 'checks'] as const;
export type DeviceCapability = (typeof DEVICE_CAPABILITIES)[number];

/** The commands of each capability (an agent announcing one answers all of them). */
export const CAPABILITY_COMMANDS: Record<DeviceCapability, readonly string[]> = {
  shell: ['pty_open', 'pty_resize', 'pty_close'],
  files: ['fs_list', 'fs_stat', 'fs_read', 'fs_write', 'fs_cancel', 'fs_mkdir', 'fs_rename', 'fs_delete'],
  processes: ['proc_list', 'proc_kill'],
  services: ['svc_list', 'svc_action'],
  // Checks (issue 61): the agent runs the set it is given and reports check_results frames; see modules/checks/check-protocol.ts.
  checks: ['checks_set'],
};

/** Most entries one fs_list answer carries (the answer must stay under the 4 MiB message limit). */
export const FS_LIST_MAX_LIMIT = 2000;
export const SERVICE_ACTIONS = ['start', 'stop', 'restart', 'enable', 'disable'] as const;
export const KILL_SIGNALS = ['TERM', 'KILL', 'INT', 'HUP'] as const;

export const deviceCommandParams = {
  /** Starts a shell on a pseudo-terminal; its output comes as binary frames of `session_id`, keystrokes go the same way. */
  pty_open: z.object({
    session_id: sessionId,
    /** The shell to run; absent: the device's default (the user's login shell, $SHELL, /bin/sh; PowerShell or cmd.exe on Windows). */
    shell: z.string().min(1).max(1024).optional(),
    cols: z.number().int().min(1).max(1000),
    rows: z.number().int().min(1).max(1000),
    env: environment.optional(),
  }),
  pty_resize: z.object({ session_id: sessionId, cols: z.number().int().min(1).max(1000), rows: z.number().int().min(1).max(1000) }),
  /** Ends the shell (its process group is killed); no session_closed follows. */
  pty_close: z.object({ session_id: sessionId }),

  /** One page of a directory, sorted by name; `cursor` is the previous page's `next_cursor`. */
  fs_list: z.object({ path: devicePath, cursor: z.string().max(8192).optional(), limit: z.number().int().min(1).max(FS_LIST_MAX_LIMIT).optional() }),
  fs_stat: z.object({ path: devicePath }),
  /** Streams a file from `offset`: answered with its size first, then binary frames, then session_closed. */
  fs_read: z.object({ session_id: sessionId, path: devicePath, offset: z.number().int().min(0).optional() }),
  /**
   * Receives a file of exactly `size` bytes as binary frames, written to a temporary name beside `path`
   * and renamed over it only when the SHA-256 of what came equals `sha256`; answered once ready to
   * receive, ended by a session_closed that says whether the file is there.
   */
  fs_write: z.object({
    session_id: sessionId,
    path: devicePath,
    size: z.number().int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    overwrite: z.boolean().optional(),
  }),
  /** Abandons an fs_read or fs_write (a partial write leaves no file); no session_closed follows. */
  fs_cancel: z.object({ session_id: sessionId }),
  fs_mkdir: z.object({ path: devicePath }),
  fs_rename: z.object({ from: devicePath, to: devicePath, overwrite: z.boolean().optional() }),
  fs_delete: z.object({ path: devicePath, recursive: z.boolean().optional() }),

  proc_list: z.object({}),
  proc_kill: z.object({ pid: z.number().int().min(1).max(2 ** 31 - 1), signal: z.enum(KILL_SIGNALS).optional() }),

  svc_list: z.object({}),
  svc_action: z.object({ name: z.string().min(1).max(255), action: z.enum(SERVICE_ACTIONS) }),
} as const;

// ---- answers (`data` of a success response) ----

export const fileEntrySchema = z.object({
  name: z.string(),
  type: z.enum(['file', 'dir', 'link', 'other']),
  size: z.number().int().min(0),
  /** RFC 3339 UTC. */
  modified_at: z.string(),
  /** Permission bits as octal text (`0644`); null where the platform has none (Windows). */
  mode: z.string().nullable(),
  /** A symbolic link's target; null otherwise. */
  link_target: z.string().nullable().optional(),
});
export type FileEntry = z.infer<typeof fileEntrySchema>;

export const ptyOpenResult = z.object({ pid: z.number().int().nullable(), shell: z.string() });
export const fsListResult = z.object({ path: z.string(), entries: z.array(fileEntrySchema), next_cursor: z.string().nullable(), total: z.number().int().nullable().optional() });
export const fsStatResult = fileEntrySchema.extend({ path: z.string() });
export const fsReadResult = z.object({ size: z.number().int().min(0), modified_at: z.string() });

export const processSchema = z.object({
  pid: z.number().int(),
  ppid: z.number().int().nullable(),
  user: z.string().nullable(),
  name: z.string(),
  command: z.string(),
  cpu_percent: z.number().nullable(),
  rss_bytes: z.number().int().nullable(),
  started_at: z.string().nullable(),
});
export type DeviceProcess = z.infer<typeof processSchema>;
export const procListResult = z.object({ processes: z.array(processSchema) });

export const serviceSchema = z.object({
  name: z.string(),
  description: z.string().nullable(),
  state: z.enum(['running', 'stopped', 'failed', 'starting', 'stopping', 'unknown']),
  start_mode: z.enum(['auto', 'manual', 'disabled', 'unknown']),
});
export type DeviceService = z.infer<typeof serviceSchema>;
/** `manager`: systemd, sysv (init.d scripts through `service`), rc.d (FreeBSD) or scm (Windows). */
export const svcListResult = z.object({ manager: z.enum(['systemd', 'sysv', 'rc.d', 'scm']), services: z.array(serviceSchema) });
export const svcActionResult = z.object({ service: serviceSchema, output: z.string().max(65_536) });

// ---- agent → server frames ----

/** Sent by the agent right after its socket opens: what it can do beyond the spec's commands. */
export const helloFrameSchema = z.object({
  type: z.literal('hello'),
  capabilities: z.array(z.string().min(1).max(64)).max(64),
  agent_version: z.string().max(64).optional(),
});

/**
 * The end of a stream the agent started (a shell exited, a file was read to its end or written and
 * checked). `error` says why it failed; absent, it succeeded.
 */
export const sessionClosedFrameSchema = z.object({
  type: z.literal('session_closed'),
  session_id: sessionId,
  exit_code: z.number().int().nullable().optional(),
  bytes: z.number().int().min(0).optional(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  error: z.string().max(4096).optional(),
});
export type SessionClosedFrame = z.infer<typeof sessionClosedFrameSchema>;

/** The capabilities of a hello frame that this server knows (others are ignored). */
export function knownCapabilities(announced: readonly string[]): DeviceCapability[] {
  return DEVICE_CAPABILITIES.filter((c) => announced.includes(c));
}
