// What the tunnel routes need from cluster mode (issue 32), without depending on it: a tunnel lives on
// the instance that holds its agent's socket, and the other instances open, list and close it there
// and forward its proxy WebSocket to it. Implemented by cluster/cluster-tunnels.ts; absent on one server.
import type { Caller } from '../auth/caller.js';
import type { TunnelDto, TunnelWithTrafficDto } from './tunnel-dto.js';

export interface RemoteOpen {
  targetHost: string;
  targetPort: number;
  /** Canonical allow_from entries (parseAllowEntry), computed where the request arrived. */
  allowFrom: string[];
  /** Authenticated by the instance the request reached; the holder checks the proxy WebSocket's caller itself. */
  openedBy: Caller;
}

/** The instance holding a tunnel, as reached over plain HTTP between instances (never over the bus). */
export interface TunnelHolder {
  instanceId: string;
  /** http://host:port of that instance's API server. */
  url: string;
}

/** Header on a proxy WebSocket forwarded between instances: the holder never forwards it again. */
export const FORWARDED_BY_HEADER = 'x-rmm-forwarded-by';

export interface RemoteTunnels {
  /** This instance's id (named in forwarded requests). */
  readonly instanceId: string;
  /** Opens the tunnel on the instance holding the agent's socket; undefined when no other instance holds it. */
  open(agentId: string, request: RemoteOpen): Promise<TunnelDto | undefined>;
  /** The agent's tunnels on the other instance holding its socket ([] when none does). */
  list(agentId: string): Promise<TunnelWithTrafficDto[]>;
  /** Closes a tunnel of the agent held by another instance; false when no instance has it. */
  close(agentId: string, tunnelId: string): Promise<boolean>;
  /**
   * Which other instance holds the agent's socket, and where to reach it; undefined when none does. Device
   * sessions' streams (a device shell, a file transfer) are forwarded there, as proxy WebSockets are.
   */
  locateAgent(agentId: string): Promise<TunnelHolder | undefined>;
  /** Which other instance has the tunnel, and where to reach it; undefined when none has it. */
  locate(tunnelId: string): Promise<TunnelHolder | undefined>;
}
