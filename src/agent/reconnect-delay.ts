// How long an agent waits before its next connection attempt: "full jitter", a uniformly random wait in
// [0, window] where the window doubles per failed attempt. When a server instance dies, every agent it held
// loses its socket in the same instant; a wait of base·(0.8…1.2) (what the agent did before cluster mode)
// sent them back within the same fraction of a second, while full jitter spreads them over the whole window.

/** The backoff ladder: the window is initialMs·2^failures, at most maxMs. */
export interface ReconnectLadder {
  initialMs: number;
  maxMs: number;
}

/**
 * Losing a connection that was up starts the ladder at this rung (window = initialMs·2^3, 8 s with the
 * agent's default 1 s) instead of rung 0. A lost connection is the event that hits many agents at once (an
 * instance died or restarted, a load balancer cut its sessions), and rung 0 would bring 5,000 agents back
 * within one second. Over 8 s the survivors see about 625 new sockets/s, and every agent is back well
 * within the 30 s a failover may take, even after one further failed attempt (16 s window); a lone agent
 * whose connection dropped waits 4 s on average instead of 1.
 */
export const DROP_RUNG = 3;

export interface ReconnectDelayInput {
  ladder: ReconnectLadder;
  /** The rung of this wait: 0 after the last connection that stayed up long enough, +1 per wait since. */
  rung: number;
  /** True for the first wait after a connection that was open (rather than after a failed attempt). */
  afterDrop: boolean;
  /** What the server's Retry-After asked for (0: nothing); the wait is never shorter. */
  retryAfterMs: number;
  /** Uniform in [0, 1). */
  random: () => number;
}

/** The window of a rung: initialMs·2^rung, at most maxMs. */
export function reconnectWindowMs(ladder: ReconnectLadder, rung: number): number {
  return Math.min(ladder.maxMs, ladder.initialMs * 2 ** Math.min(rung, 30));
}

/**
 * The wait before the next attempt, in whole milliseconds, and the rung of the wait after it: a drop lifts
 * the ladder to DROP_RUNG, each wait climbs one rung.
 */
export function nextReconnect(input: ReconnectDelayInput): { delayMs: number; nextRung: number } {
  const rung = input.afterDrop ? Math.max(input.rung, DROP_RUNG) : input.rung;
  const window = reconnectWindowMs(input.ladder, rung);
  const delayMs = Math.max(input.retryAfterMs, Math.floor(input.random() * (window + 1)));
  return { delayMs, nextRung: rung + 1 };
}
