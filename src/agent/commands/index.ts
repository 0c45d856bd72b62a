// The reference agent's command table (contract §5) and the dispatcher that turns one incoming text
// frame into the answer frame: parse, look up, validate params, run, and map any failure to
// `success:false` — a bad frame or a failing handler never throws out of here.
import { readFile } from 'node:fs/promises';
import {
  AGENT_COMMANDS,
  MAX_MESSAGE_BYTES,
  commandFrameSchema,
  commandParams,
  parseFrame,
  type AgentCommand,
  type AgentFrame,
  type CommandFrame,
} from '../../modules/agent-hub/agent-protocol.js';
import { renderConfig } from '../config-drift.js';
import { procKill, procList } from '../device/processes.js';
import { svcAction, svcList } from '../device/services.js';
import { ptyHandlers } from '../device/pty-shell.js';
import { fsDelete, fsList, fsMkdir, fsRename, fsStat } from '../device/fs-commands.js';
import { fsCancel, fsRead, fsWrite } from '../device/fs-transfer.js';
import { applyUpdates, hypervisorAction, majorUpdate, reboot, updateCheck } from './device.js';
import { execHandler } from './exec.js';
import { tunnelConnect, tunnelDisconnect, tunnelPause, tunnelResume } from './tunnel.js';
import { CommandError, type CommandContext, type CommandHandler, type CommandTable } from './types.js';
import { vpnPeerAdd, vpnPeerDelete, vpnPeerList } from './vpn.js';

async function backup(_params: unknown, ctx: CommandContext) {
  try {
    return { content: renderConfig(await readFile(ctx.backupFile, 'utf8'), ctx.device.device.config_changes) };
  } catch (err) {
    throw new CommandError(`cannot read the configuration file ${ctx.backupFile}: ${(err as Error).message}`);
  }
}

export const commandHandlers: CommandTable = {
  exec: execHandler,
  update_check: updateCheck,
  update: applyUpdates,
  major_update: majorUpdate,
  reboot,
  backup,
  vpn_peer_add: vpnPeerAdd,
  vpn_peer_list: vpnPeerList,
  vpn_peer_delete: vpnPeerDelete,
  hypervisor_action: hypervisorAction,
  tunnel_connect: tunnelConnect,
  tunnel_disconnect: tunnelDisconnect,
  tunnel_pause: tunnelPause,
  tunnel_resume: tunnelResume,
  proc_list: procList,
  proc_kill: procKill,
  svc_list: svcList,
  svc_action: svcAction,
  ...ptyHandlers,
  fs_list: fsList,
  fs_stat: fsStat,
  fs_read: fsRead,
  fs_write: fsWrite,
  fs_cancel: fsCancel,
  fs_mkdir: fsMkdir,
  fs_rename: fsRename,
  fs_delete: fsDelete,
};

type ResponseFrame = Extract<AgentFrame, { type: 'response' }>;

const isCommand = (name: string): name is AgentCommand => (AGENT_COMMANDS as string[]).includes(name);

/**
 * Runs one parsed command frame and builds its answer. A command missing from `table` is unknown, as it
 * is to an agent version that predates it (tests use that to play older agents).
 */
export async function runCommand(frame: CommandFrame, ctx: CommandContext, table: Partial<CommandTable> = commandHandlers): Promise<ResponseFrame> {
  const fail = (error: string): ResponseFrame => ({ type: 'response', id: frame.id, success: false, error: error.slice(0, 65_536) });
  if (!isCommand(frame.command) || !table[frame.command]) return fail(`unknown command ${frame.command}`);
  const parsed = commandParams[frame.command].safeParse(frame.params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    return fail(`invalid params for ${frame.command}: ${where}${issue?.message ?? 'invalid'}`);
  }
  const handler = table[frame.command] as CommandHandler<AgentCommand>;
  try {
    const data = await handler(parsed.data as never, ctx);
    return { type: 'response', id: frame.id, success: true, data };
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
}

export type DispatchResult =
  | { kind: 'answer'; command: string; frame: ResponseFrame; text: string }
  | { kind: 'dropped'; reason: string };

/**
 * Handles one text frame from the server. A frame that is not a valid command but carries
 * `type:"command"` and an id is answered with the reason; anything else is dropped.
 */
export async function dispatchText(text: string, ctx: CommandContext, table: Partial<CommandTable> = commandHandlers): Promise<DispatchResult> {
  const parsed = parseFrame(commandFrameSchema, text);
  if (!parsed.ok) {
    const id = answerableId(text);
    if (id === null) return { kind: 'dropped', reason: parsed.reason };
    return answer('invalid', { type: 'response', id, success: false, error: `invalid command frame: ${parsed.reason}` });
  }
  return answer(parsed.frame.command, await runCommand(parsed.frame, ctx, table));
}

function answer(command: string, frame: ResponseFrame): DispatchResult {
  let text = JSON.stringify(frame);
  if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES) {
    frame = { type: 'response', id: frame.id, success: false, error: `the answer is larger than ${MAX_MESSAGE_BYTES} bytes` };
    text = JSON.stringify(frame);
  }
  return { kind: 'answer', command, frame, text };
}

function answerableId(text: string): string | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return null;
    const { type, id } = value as { type?: unknown; id?: unknown };
    return type === 'command' && typeof id === 'string' && id.length >= 1 && id.length <= 128 ? id : null;
  } catch {
    return null;
  }
}
