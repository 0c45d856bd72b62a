// The reference agent's HTTP calls to the server (contract §2): registration and heartbeats, with the
// agent API key, a per-request timeout, and cancellation when the agent stops. Also derives the agent
// WebSocket URL from the server URL.
import type { Platform } from './device-state.js';
import { requestText, type TextAnswer } from './http-text.js';

const REQUEST_TIMEOUT_MS = 30_000;

export interface RegisterBody {
  agent_id?: string;
  name?: string;
  hostname: string;
  platform: Platform;
  agent_version: string;
}

export interface RegisterAnswer {
  agent_id: string;
  name?: string;
  pre_registered?: boolean;
}

export interface HeartbeatAnswer {
  ok: boolean;
  status?: string;
  server_time?: string;
  update_available?: boolean;
}

/** A non-2xx answer: `status` and the error body's `code` when it had one. */
export class ServerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message);
  }
}

/** Why `value` cannot be a server URL for `--server`, or undefined when it can. */
export function serverUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `--server is not a URL: ${value}`;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : '--server must be an http:// or https:// URL';
}

/** `http://host:8080` or `http://host:8080/` → `http://host:8080/`; a path prefix is kept. */
export function baseOf(serverUrl: string): URL {
  const url = new URL(serverUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`server URL must be http or https: ${serverUrl}`);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  url.search = '';
  url.hash = '';
  return url;
}

/** The ws:// or wss:// URL of an API path (`agent/ws`, `proxy/<id>`) on the server. */
export function apiSocketUrl(serverUrl: string, apiPath: string): URL {
  const url = new URL(`api/v1/${apiPath}`, baseOf(serverUrl));
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url;
}

export function agentSocketUrl(serverUrl: string, agentId: string): string {
  const url = apiSocketUrl(serverUrl, 'agent/ws');
  url.searchParams.set('agent_id', agentId);
  return url.toString();
}

export class ServerApi {
  private readonly base: URL;

  constructor(
    serverUrl: string,
    private readonly apiKey: string,
    private readonly signal: AbortSignal,
  ) {
    this.base = baseOf(serverUrl);
  }

  async register(body: RegisterBody): Promise<RegisterAnswer> {
    const answer = (await this.post('api/v1/agent/register', JSON.stringify(body))) as Partial<RegisterAnswer>;
    if (typeof answer.agent_id !== 'string' || answer.agent_id === '') throw new ServerError(200, null, 'registration answer has no agent_id');
    return answer as RegisterAnswer;
  }

  /** The body is sent as the exact JSON text given (the server stores it byte for byte). */
  async heartbeat(document: string): Promise<HeartbeatAnswer> {
    return (await this.post('api/v1/agent/heartbeat', document)) as HeartbeatAnswer;
  }

  private async post(path: string, body: string): Promise<unknown> {
    let answer: TextAnswer;
    try {
      answer = await requestText(new URL(path, this.base), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': this.apiKey },
        body,
        signal: this.signal,
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
    } catch (err) {
      if (this.signal.aborted) throw err;
      throw new Error(`cannot reach the server: ${(err as Error).message}`);
    }
    const { status, statusText, text } = answer;
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: reported below by status, or as a bad answer
    }
    if (status < 200 || status > 299) {
      const err = (json ?? {}) as { error?: unknown; code?: unknown };
      const message = typeof err.error === 'string' ? err.error : text.slice(0, 200) || statusText;
      throw new ServerError(status, typeof err.code === 'string' ? err.code : null, `HTTP ${status}: ${message}`);
    }
    if (json === null || typeof json !== 'object') throw new ServerError(status, null, `HTTP ${status}: answer is not a JSON object`);
    return json;
  }
}
