// Heartbeat load over real HTTP and agent WebSockets against a running server: every agent holds its
// socket and posts a heartbeat every 1–2 s, each one numbered (its `uptime_seconds` is the number), so
// a test can tell afterwards exactly which acknowledged heartbeats the server stored.
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';

export interface HeartbeatAnswer {
  agent: string;
  seq: number;
  status: number;
  body: string;
  retryAfter: string | null;
  /** performance.now() when the answer arrived. */
  at: number;
}

export interface LoadAgent {
  id: string;
  /** Numbers of the heartbeats answered 200. */
  acked: number[];
  socket: WebSocket;
  /** Close code once its socket closed; undefined while open. */
  closedWith: number | undefined;
  /** With `reconnect`: sockets opened again after one was lost. */
  reconnects: number;
}

export interface LoadOptions {
  /**
   * A lost socket is opened again after a uniformly random 0–8 s (the reference agent's full jitter),
   * until it opens: for tests where a server instance dies and a load balancer sends agents elsewhere.
   */
  reconnect?: boolean;
}

const RECONNECT_WINDOW_MS = 8_000;

export class HeartbeatLoad {
  readonly agents: LoadAgent[] = [];
  readonly answers: HeartbeatAnswer[] = [];
  /** Answers to the readers of startReaders (`seq` counts each reader's requests). */
  readonly reads: HeartbeatAnswer[] = [];
  /** Requests that got no HTTP answer at all (refused, reset, or none within the timeout). */
  readonly transportErrors: string[] = [];
  #loops: Promise<void>[] = [];
  #stopped = new AbortController();

  #closing = false;

  private constructor(
    private readonly base: string,
    private readonly key: string,
    private readonly options: LoadOptions,
  ) {}

  /** Registers `count` agents with an agent key and opens their sockets (resolves once all are open). */
  static async connect(base: string, key: string, count: number, options: LoadOptions = {}): Promise<HeartbeatLoad> {
    const load = new HeartbeatLoad(base, key, options);
    // Every agent's pause listens on the one stop signal.
    setMaxListeners(count + 100, load.#stopped.signal);
    const ids = Array.from({ length: count }, () => randomBytes(16).toString('hex'));
    for (let i = 0; i < ids.length; i += 50) {
      await Promise.all(ids.slice(i, i + 50).map((id, j) => load.#register(id, `restart-${i + j}`)));
    }
    await Promise.all(
      ids.map((id) => {
        const agent: LoadAgent = { id, acked: [], socket: undefined as unknown as WebSocket, closedWith: undefined, reconnects: 0 };
        load.agents.push(agent);
        return load.#open(agent);
      }),
    );
    return load;
  }

  /** Opens the agent's socket; resolves once open, rejects when the first try fails. */
  #open(agent: LoadAgent): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const socket = new WebSocket(`${this.base.replace(/^http/, 'ws')}/api/v1/agent/ws?agent_id=${agent.id}`, { headers: { 'x-api-key': this.key } });
      agent.socket = socket;
      agent.closedWith = undefined;
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.on('error', () => undefined); // a later error is followed by `close`, handled there
      socket.on('close', (code) => {
        agent.closedWith = code;
        if (this.options.reconnect && !this.#closing) this.#reopenLater(agent);
      });
    });
  }

  #reopenLater(agent: LoadAgent): void {
    setTimeout(() => {
      if (this.#closing) return;
      this.#open(agent).then(
        () => agent.reconnects++,
        () => undefined, // its close event schedules the next try
      );
    }, Math.random() * RECONNECT_WINDOW_MS);
  }

  /** Starts every agent's heartbeat loop. */
  start(): void {
    this.#loops = this.agents.map((agent) => this.#loop(agent));
  }

  /**
   * Also keeps `concurrency` readers asking for agents back to back (an operator's console), with
   * `headers` as credentials; their answers go to `reads`. With them some pooled connection is nearly
   * always in use when the database goes away, which is when it used to take the server down.
   */
  startReaders(headers: Record<string, string>, concurrency: number): void {
    for (let i = 0; i < concurrency; i++) this.#loops.push(this.#readLoop(headers));
  }

  /** Ends the heartbeat loops, waiting for requests in flight; the sockets stay open. */
  async stop(): Promise<void> {
    this.#stopped.abort();
    await Promise.all(this.#loops);
  }

  /** Stops the loops and closes the sockets. */
  async close(): Promise<void> {
    this.#closing = true;
    await this.stop();
    for (const agent of this.agents) agent.socket.terminate();
  }

  /** Answers that arrived after `since` (performance.now()). */
  answersSince(since: number): HeartbeatAnswer[] {
    return this.answers.filter((a) => a.at >= since);
  }

  /** True when every agent had a heartbeat acknowledged after `since`. */
  allAckedSince(since: number): boolean {
    const acked = new Set(this.answersSince(since).filter((a) => a.status === 200).map((a) => a.agent));
    return this.agents.every((a) => acked.has(a.id));
  }

  async #register(id: string, name: string): Promise<void> {
    const res = await fetch(`${this.base}/api/v1/agent/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': this.key },
      body: JSON.stringify({ agent_id: id, name, hostname: name, platform: 'linux', agent_version: '1.0.0' }),
    });
    if (res.status !== 200 && res.status !== 201) throw new Error(`register ${name}: ${res.status} ${await res.text()}`);
  }

  async #loop(agent: LoadAgent): Promise<void> {
    const signal = this.#stopped.signal;
    // Spread the first beats, so the agents do not all arrive in one burst.
    await sleep(Math.random() * 1500, undefined, { signal }).catch(() => undefined);
    for (let seq = 1; !signal.aborted; seq++) {
      await this.#beat(agent, seq);
      await sleep(1000 + Math.random() * 1000, undefined, { signal }).catch(() => undefined);
    }
  }

  async #readLoop(headers: Record<string, string>): Promise<void> {
    const signal = this.#stopped.signal;
    for (let seq = 1; !signal.aborted; seq++) {
      const agent = this.agents[Math.floor(Math.random() * this.agents.length)]!;
      try {
        const res = await fetch(`${this.base}/api/v1/agents/${agent.id}`, { headers, signal: AbortSignal.timeout(30_000) });
        this.reads.push({ agent: agent.id, seq, status: res.status, body: await res.text(), retryAfter: res.headers.get('retry-after'), at: performance.now() });
      } catch (err) {
        this.transportErrors.push(`read ${agent.id}: ${(err as Error).message} ${String((err as Error).cause ?? '')}`);
      }
      // A short pause: the readers must keep the database busy, not take both cores from the server.
      await sleep(20, undefined, { signal }).catch(() => undefined);
    }
  }

  async #beat(agent: LoadAgent, seq: number): Promise<void> {
    const body = JSON.stringify({
      agent_id: agent.id,
      platform: 'linux',
      hostname: `host-${agent.id.slice(0, 8)}`,
      agent_version: '1.0.0',
      uptime_seconds: seq,
      cpu: { usage_percent: 5 },
    });
    try {
      const res = await fetch(`${this.base}/api/v1/agent/heartbeat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': this.key },
        body,
        // Generous: only a server that stopped answering altogether reaches it.
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      this.answers.push({ agent: agent.id, seq, status: res.status, body: text, retryAfter: res.headers.get('retry-after'), at: performance.now() });
      if (res.status === 200) agent.acked.push(seq);
    } catch (err) {
      this.transportErrors.push(`${agent.id} #${seq}: ${(err as Error).message} ${String((err as Error).cause ?? '')}`);
    }
  }
}
