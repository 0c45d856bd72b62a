// tunnel_connect / tunnel_disconnect: not implemented by this agent version yet. Kept as one small
// module so the tunnel feature can replace it without touching the command table's other entries.
import type { CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import { CommandError } from './types.js';

export const TUNNELS_UNSUPPORTED = 'tunnels are not supported by this agent version';

export async function tunnelConnect(_params: CommandParams<'tunnel_connect'>): Promise<never> {
  throw new CommandError(TUNNELS_UNSUPPORTED);
}

export async function tunnelDisconnect(_params: CommandParams<'tunnel_disconnect'>): Promise<never> {
  throw new CommandError(TUNNELS_UNSUPPORTED);
}
