// A tunnel as the manager holds it (tunnel-manager.ts): where it listens, where it leads, who opened it and
// may use it, its sessions and bytes, and the terms a remote-access launcher adds (issue 60).
import type net from 'node:net';
import type { Caller } from '../auth/caller.js';
import type { AllowList } from './allow-list.js';
import type { SessionWatch, Traffic, TunnelSession } from './tunnel-session.js';

/** What a tunnel is for: opened by POST /tunnel, or by the remote-access launchers (issue 60). */
export type TunnelPurpose = 'tunnel' | 'desktop' | 'rdp' | 'web';

/** Why a tunnel closed, for whoever opened it with `onClose` (a remote-access session's audit entry). */
export type TunnelEnd = 'closed' | 'agent-gone' | 'idle' | 'time-limit' | 'session-ended' | 'server-stopping';

/** What a remote-access launcher asks of a tunnel beyond an ordinary one (issue 60). */
export interface TunnelTerms {
  purpose?: TunnelPurpose;
  /** Only the opener's own sign-in session may use the proxy WebSocket, not their other tokens. */
  sessionBound?: boolean;
  /** A desktop whose keyboard and mouse input the watch drops (the proxy route lets its read-only opener in). */
  viewOnly?: boolean;
  /** Closes at this time, sessions or not. */
  expiresAt?: Date;
  /** Closes when its first session ends, or when none has started within this many ms. */
  endsWithSession?: { connectWithinMs: number };
  /** At most this many sessions at once (a desktop takes one); more are refused. */
  maxSessions?: number;
  /** Sees each session's bytes and may drop some of the client's (a view-only desktop). */
  watch?: () => SessionWatch;
  /** Called once when the tunnel closes, with why and its bytes. */
  onClose?: (tunnel: Tunnel, end: TunnelEnd) => void;
}

/** Who opened a tunnel, as shown to operators: a username, or an API key's name and hint (never the key). */
export type OpenedBy = { type: 'user'; name: string; key_hint: null } | { type: 'api_key'; name: string; key_hint: string };

export interface Tunnel {
  id: string;
  agentId: string;
  port: number;
  bindAddress: string;
  targetHost: string;
  targetPort: number;
  createdAt: Date;
  /** Client addresses the proxy port lets in. */
  allowFrom: AllowList;
  openedBy: OpenedBy;
  /** The opener's identity, which alone may use the proxy WebSocket (user id or API key id). */
  owner: string;
  /** Connections to the proxy port reset: from outside allowFrom, or by another account on the server itself. */
  refused: number;
  sessions: Map<string, TunnelSession>;
  /** Bytes over the tunnel's life; out counts only what clients took. */
  traffic: Traffic;
  lastActivity: number;
  server: net.Server;
  purpose: TunnelPurpose;
  expiresAt: Date | null;
  terms: TunnelTerms;
  /** Cancels the tunnel's own timers (its time limit, its first session's deadline). */
  cancelTimers: () => void;
}

export function ownerOf(caller: Caller): string {
  return caller.kind === 'user' ? `user:${caller.userId}` : `api_key:${caller.keyId}`;
}

/** The opener down to the sign-in session its token names; a caller without one owns nothing bound so. */
export function sessionOwnerOf(caller: Caller): string {
  return caller.kind === 'user' && caller.sessionId ? `user:${caller.userId}:session:${caller.sessionId}` : 'nobody';
}
