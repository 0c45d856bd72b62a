// One device shell (issue 59): the console's WebSocket on one side, the agent's PTY on the other, bytes
// relayed both ways through a device stream of the agent's socket. Flow control both ways: output from
// the agent is held (tunnel_pause) while the browser or the recording falls behind, and keystrokes are
// not read while the agent's socket is full. The session ends once, for whichever reason comes first —
// the browser left, the shell exited, the agent went away, nothing happened for the idle limit, or the
// total limit passed — and then the shell is closed, the recording finished and the end reported.
import type { WebSocket } from 'ws';
import type { Clock } from '../../platform/clock.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import type { DeviceStream } from '../agent-hub/device-streams.js';
import type { SessionClosedFrame } from '../agent-hub/device-protocol.js';
import { DrainWatch } from '../agent-hub/drain-watch.js';
import { parseControlFrame } from '../terminal/terminal-session.js';
import type { AsciicastRecorder } from './asciicast-recorder.js';

const HIGH_WATER = 1024 * 1024;
const LOW_WATER = 256 * 1024;

/** Why a shell ended, with the WebSocket close code the browser sees. */
export interface ShellEnd {
  reason: 'closed' | 'exited' | 'idle' | 'time-limit' | 'agent-gone' | 'failed';
  code: number;
  /** The close frame's reason text (at most 123 bytes). */
  message: string;
  exitCode?: number | null;
  bytesIn: number;
  bytesOut: number;
}

export interface ShellLimits {
  idleMs: number;
  maxMs: number;
}

export class ShellSession {
  readonly #drain: DrainWatch;
  readonly #stopTimers: Array<() => void> = [];
  /** Output that came before the session was ready (the agent's frames may overtake pty_open's answer). */
  #early: Buffer[] | null = [];
  /** Keystrokes typed before the shell was open (a fast client, a paste on connect): sent once it is. */
  #typedEarly: Buffer[] = [];
  /** Why output is held: the browser is slow, the recording is slow. */
  readonly #holds = new Set<'client' | 'disk'>();
  #lastActivity: number;
  #bytesIn = 0;
  #bytesOut = 0;
  #ended: ShellEnd | null = null;
  #recorder: AsciicastRecorder | null = null;
  readonly ended: Promise<ShellEnd>;
  #resolveEnded!: (end: ShellEnd) => void;
  stream!: DeviceStream;

  constructor(
    private readonly ws: WebSocket,
    private readonly hub: AgentHub,
    private readonly agentId: string,
    private readonly clock: Clock,
    private readonly limits: ShellLimits,
  ) {
    this.#drain = new DrainWatch(ws, LOW_WATER);
    this.#lastActivity = clock.now().getTime();
    this.ended = new Promise((resolve) => (this.#resolveEnded = resolve));
    this.stream = hub.streams.open(agentId, 'pty', {
      data: (payload) => this.#fromAgent(payload),
      closed: (frame) => this.#closedByAgent(frame),
      gone: () => this.end({ reason: 'agent-gone', code: 1011, message: 'the agent disconnected' }),
    });
    ws.on('message', (data, isBinary) => this.#fromClient(data as Buffer, isBinary));
    ws.on('close', () => this.end({ reason: 'closed', code: 1000, message: 'closed' }));
    ws.on('error', () => this.end({ reason: 'closed', code: 1000, message: 'closed' }));
    this.#stopTimers.push(this.clock.timer(limits.maxMs, () => this.end({ reason: 'time-limit', code: 4009, message: 'session time limit' })));
    this.#armIdle(limits.idleMs);
  }

  get id(): string {
    return this.stream.id;
  }

  get isEnded(): boolean {
    return this.#ended !== null;
  }

  /** The shell is open: output flows to the browser and into `recorder` from now on. */
  ready(recorder: AsciicastRecorder | null): void {
    this.#recorder = recorder;
    const early = this.#early ?? [];
    this.#early = null;
    for (const payload of early) this.#fromAgent(payload);
    for (const payload of this.#typedEarly.splice(0)) this.#toAgent(payload);
  }

  /** Ends the session (once): closes the browser's socket with the end's code; `ended` resolves. */
  end(end: Omit<ShellEnd, 'bytesIn' | 'bytesOut'>): void {
    if (this.#ended) return;
    this.#ended = { ...end, bytesIn: this.#bytesIn, bytesOut: this.#bytesOut };
    for (const stop of this.#stopTimers) stop();
    this.stream.release();
    this.#drain.release();
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(end.code, end.message.slice(0, 120));
    this.ws.resume();
    this.#resolveEnded(this.#ended);
  }

  #fromAgent(payload: Buffer): void {
    if (this.#ended) return;
    if (this.#early) {
      this.#early.push(payload);
      return;
    }
    this.#touch();
    this.#bytesOut += payload.length;
    if (this.#recorder && !this.#recorder.output(payload)) this.#hold('disk', (resume) => this.#recorder!.drained(resume));
    this.ws.send(payload, this.#drain.sent);
    if (this.ws.bufferedAmount > HIGH_WATER) this.#hold('client', (resume) => this.#drain.whenDrained(resume));
  }

  /** Holds the agent's output for `why` until `until` calls back (tunnel_pause / tunnel_resume). */
  #hold(why: 'client' | 'disk', until: (resume: () => void) => void): void {
    if (this.#holds.has(why)) return;
    const first = this.#holds.size === 0;
    this.#holds.add(why);
    if (first) this.#flow('tunnel_pause');
    until(() => {
      this.#holds.delete(why);
      if (this.#holds.size === 0 && !this.#ended) this.#flow('tunnel_resume');
    });
  }

  #flow(command: 'tunnel_pause' | 'tunnel_resume'): void {
    // An agent that cannot pause only makes the browser's queue longer; the session goes on.
    this.hub.request(this.agentId, command, { session_id: this.id }, 5_000).catch(() => undefined);
  }

  #fromClient(data: Buffer, isBinary: boolean): void {
    if (this.#ended) return;
    this.#touch();
    if (isBinary) {
      if (this.#early) {
        // Bounded: past the high-water mark the browser is not read until the shell is open.
        this.#typedEarly.push(data);
        if (this.#typedEarly.reduce((n, b) => n + b.length, 0) > HIGH_WATER) this.ws.pause();
      } else this.#toAgent(data);
      return;
    }
    const control = parseControlFrame(data);
    if (!control || this.#early) return;
    const { cols, rows } = control;
    this.#recorder?.resize(cols, rows);
    this.hub.request(this.agentId, 'pty_resize', { session_id: this.id, cols, rows }, 15_000).catch(() => undefined);
  }

  #toAgent(data: Buffer): void {
    this.#bytesIn += data.length;
    this.stream.send(data);
    // The agent's socket is full (a paste of megabytes): stop reading the browser until it drains.
    if (this.stream.queued() > HIGH_WATER) {
      this.ws.pause();
      this.stream.whenDrained(() => this.ws.resume());
    } else this.ws.resume();
  }

  #closedByAgent(frame: SessionClosedFrame): void {
    const exitCode = frame.exit_code ?? null;
    const message = frame.error ? `shell failed: ${frame.error}` : `shell exited${exitCode === null ? '' : ` with ${exitCode}`}`;
    this.end({ reason: frame.error ? 'failed' : 'exited', code: frame.error ? 1011 : 1000, message, exitCode });
  }

  #touch(): void {
    this.#lastActivity = this.clock.now().getTime();
  }

  /** One timer for the idle limit, not one per byte: when it fires early activity re-arms it for the rest. */
  #armIdle(ms: number): void {
    this.#stopTimers.push(
      this.clock.timer(ms, () => {
        if (this.#ended) return;
        const idleFor = this.clock.now().getTime() - this.#lastActivity;
        if (idleFor >= this.limits.idleMs) this.end({ reason: 'idle', code: 4008, message: 'idle' });
        else this.#armIdle(this.limits.idleMs - idleFor);
      }),
    );
  }
}
