// tunnel_connect / tunnel_disconnect (contract §5) and the optional tunnel_pause / tunnel_resume: thin
// handlers over the agent's TunnelSessions, which owns the target sockets and the binary frames. Without
// tunnel support in the context they refuse.
import type { CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import { CommandError, type CommandContext } from './types.js';

export const TUNNELS_UNSUPPORTED = 'tunnels are not supported by this agent version';

export async function tunnelConnect(params: CommandParams<'tunnel_connect'>, ctx: CommandContext): Promise<Record<string, never>> {
  if (!ctx.tunnels) throw new CommandError(TUNNELS_UNSUPPORTED);
  await ctx.tunnels.connect(params);
  return {};
}

export async function tunnelDisconnect(params: CommandParams<'tunnel_disconnect'>, ctx: CommandContext): Promise<Record<string, never>> {
  if (!ctx.tunnels) throw new CommandError(TUNNELS_UNSUPPORTED);
  ctx.tunnels.disconnect(params.session_id);
  return {};
}

// Flow control applies to every session: a device session's source (a shell, a file read) first.
export async function tunnelPause(params: CommandParams<'tunnel_pause'>, ctx: CommandContext): Promise<Record<string, never>> {
  if (ctx.streams?.hold(params.session_id)) return {};
  if (!ctx.tunnels) throw new CommandError(TUNNELS_UNSUPPORTED);
  ctx.tunnels.hold(params.session_id);
  return {};
}

export async function tunnelResume(params: CommandParams<'tunnel_resume'>, ctx: CommandContext): Promise<Record<string, never>> {
  if (ctx.streams?.release(params.session_id)) return {};
  if (!ctx.tunnels) throw new CommandError(TUNNELS_UNSUPPORTED);
  ctx.tunnels.release(params.session_id);
  return {};
}
