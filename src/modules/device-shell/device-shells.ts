// The device shells of this instance: the limits per agent and per user, and the life of each session —
// its row and audit entries (the device-sessions log), pty_open on the agent, the relay (shell-session.ts),
// the recording (asciicast-recorder.ts, stored in the blob store at the end), and pty_close. Sessions
// live where the agent's socket is, so the counts here are this instance's.
import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { WebSocket } from 'ws';
import { AppError } from '../../platform/errors.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import { ptyOpenResult } from '../agent-hub/device-protocol.js';
import type { Agent } from '../agents/agents.service.js';
import type { Caller } from '../auth/caller.js';
import type { DeviceSessionLog } from '../device-sessions/session-log.js';
import type { BlobStorage } from '../firmware/blob-store.js';
import type { DeviceSettings } from '../settings/device-settings.js';
import type { SettingsService } from '../settings/settings.service.js';
import { AsciicastRecorder } from './asciicast-recorder.js';
import { ShellSession, type ShellEnd } from './shell-session.js';

/** A recording larger than this is not kept (8 hours of a busy terminal compress to far less). */
const MAX_RECORDING_BYTES = 4 * 1024 ** 3;
const OPEN_TIMEOUT_MS = 15_000;

export interface ShellRequest {
  ws: WebSocket;
  agent: Agent;
  caller: Extract<Caller, { kind: 'user' }>;
  ip: string;
  cols: number;
  rows: number;
  /** The settings `checkLimits` read: the session's limits and whether it is recorded. */
  settings: DeviceSettings;
}

export class DeviceShells {
  readonly #perAgent = new Map<string, number>();
  readonly #perUser = new Map<number, number>();
  readonly #open = new Set<ShellSession>();
  readonly tempDir: string;

  constructor(
    private readonly hub: AgentHub,
    private readonly sessions: DeviceSessionLog,
    private readonly settings: SettingsService,
    private readonly blobs: BlobStorage,
    private readonly clock: Clock,
    private readonly logger: Logger,
    dataDir: string,
  ) {
    this.tempDir = path.join(dataDir, 'device-recordings-tmp');
  }

  /** 429 when the agent or the user has as many shells open as the settings allow; else the settings, for `run`. */
  async checkLimits(agentId: string, userId: number): Promise<DeviceSettings> {
    const limits = await this.settings.device();
    if ((this.#perAgent.get(agentId) ?? 0) >= limits.device_shells_per_agent) {
      throw new AppError('RATE_LIMITED', `At most ${limits.device_shells_per_agent} shells may be open on one agent (setting device_shells_per_agent); close one first`);
    }
    if ((this.#perUser.get(userId) ?? 0) >= limits.device_shells_per_user) {
      throw new AppError('RATE_LIMITED', `At most ${limits.device_shells_per_user} device shells per user (setting device_shells_per_user); close one first`);
    }
    return limits;
  }

  /** Temporary recordings of sessions that ended with a crash are of no use: removed at start. */
  async start(): Promise<void> {
    await rm(this.tempDir, { recursive: true, force: true });
  }

  /** Ends every open shell (the server stops); resolves once their ends are recorded. */
  async stop(): Promise<void> {
    const open = [...this.#open];
    for (const session of open) session.end({ reason: 'closed', code: 1001, message: 'the server is stopping' });
    await Promise.all(open.map((s) => s.ended));
  }

  /**
   * Runs one shell session on an accepted WebSocket until it ends. The session takes the socket's messages
   * before this first awaits: a message the socket emits with no listener is lost, and a client may type
   * the moment it has opened.
   */
  async run(request: ShellRequest): Promise<void> {
    const { ws, agent, caller, settings } = request;
    const count = <K>(map: Map<K, number>, key: K, by: number) => {
      const next = (map.get(key) ?? 0) + by;
      if (next > 0) map.set(key, next);
      else map.delete(key);
    };
    count(this.#perAgent, agent.id, 1);
    count(this.#perUser, caller.userId, 1);
    const session = new ShellSession(ws, this.hub, agent.id, this.clock, { idleMs: settings.device_idle_minutes * 60_000, maxMs: settings.device_session_max_minutes * 60_000 });
    this.#open.add(session);
    try {
      ws.send(JSON.stringify({ type: 'session', session_id: session.id }));
      const finish = await this.sessions.start({ id: session.id, kind: 'shell', agent, caller, ip: request.ip, subject: 'shell' });
      const recorder = await this.#openShell(session, request, settings.device_recording);
      const end = await session.ended;
      if (end.reason !== 'exited' && end.reason !== 'agent-gone' && recorder !== undefined) {
        this.hub.request(agent.id, 'pty_close', { session_id: session.id }, OPEN_TIMEOUT_MS).catch(() => undefined);
      }
      const recording = recorder ? await this.#store(recorder) : null;
      await finish({ reason: reasonText(end), bytesIn: end.bytesIn, bytesOut: end.bytesOut, status: end.code, recording });
    } catch (err) {
      this.logger.error({ err, agentId: agent.id, sessionId: session.id }, 'a device shell failed');
      session.end({ reason: 'failed', code: 1011, message: 'the session failed on the server' });
    } finally {
      this.#open.delete(session);
      count(this.#perAgent, agent.id, -1);
      count(this.#perUser, caller.userId, -1);
    }
  }

  /**
   * Opens the shell on the agent and starts the recording; undefined when it could not be opened (the
   * session is ended with why), else the recorder (null when recording is off).
   */
  async #openShell(session: ShellSession, request: ShellRequest, record: boolean): Promise<AsciicastRecorder | null | undefined> {
    let opened: { pid: number | null; shell: string };
    try {
      opened = ptyOpenResult.parse(await this.hub.request(request.agent.id, 'pty_open', { session_id: session.id, cols: request.cols, rows: request.rows }, OPEN_TIMEOUT_MS));
    } catch (err) {
      session.end({ reason: 'failed', code: 1011, message: `the shell could not be opened: ${err instanceof Error ? err.message : String(err)}` });
      return undefined;
    }
    if (session.isEnded) {
      // The browser left while the agent was opening it.
      this.hub.request(request.agent.id, 'pty_close', { session_id: session.id }, OPEN_TIMEOUT_MS).catch(() => undefined);
      return undefined;
    }
    let recorder: AsciicastRecorder | null = null;
    if (record) {
      await mkdir(this.tempDir, { recursive: true, mode: 0o700 });
      const title = `${request.agent.name}: ${opened.shell} (${request.caller.username})`;
      recorder = new AsciicastRecorder(path.join(this.tempDir, `${session.id}.cast.gz`), { width: request.cols, height: request.rows, shell: opened.shell, title }, this.clock);
    }
    session.ready(recorder);
    return recorder;
  }

  /** Stores the finished recording in the blob store; null (logged) when it could not be. */
  async #store(recorder: AsciicastRecorder): Promise<{ sha256: string; bytes: number } | null> {
    try {
      const file = await recorder.finish();
      const blob = await this.blobs.receive(createReadStream(file), MAX_RECORDING_BYTES);
      return { sha256: blob.sha256, bytes: blob.size };
    } catch (err) {
      this.logger.error({ err }, 'a device shell recording could not be stored');
      return null;
    } finally {
      await recorder.discard().catch(() => undefined);
    }
  }
}

/** The session log's reason: closed, exited, idle, time-limit, agent-gone, failed: why. */
function reasonText(end: ShellEnd): string {
  if (end.reason === 'failed') return `failed: ${end.message}`;
  return end.reason;
}
