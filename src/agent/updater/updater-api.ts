// The updater's HTTP calls to the server (contract §9), with the agent's key: the agent (flag, last
// heartbeat, the hash its heartbeat reports), the latest firmware, the download (streamed to a file and
// hashed on the way), clearing the flag, and reports. A request that gets no answer fails with
// "cannot reach the server", which the health check tells apart from an answer it can judge.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { Platform } from '../device-state.js';
import { baseOf, ServerError } from '../server-api.js';
import type { UpdaterReport } from './update-state.js';

const REQUEST_TIMEOUT_MS = 30_000;
const DOWNLOAD_TIMEOUT_MS = 30 * 60_000;
const MAX_REPORT_MESSAGE = 1000;

/** The fields of GET /agents/{id} the updater reads (`system` is the latest heartbeat body, as sent). */
export interface AgentView {
  update_requested: boolean;
  platform: Platform | null;
  last_heartbeat: string | null;
  system: unknown;
}

/** The fields of GET /firmware/latest the updater reads. */
export interface FirmwareView {
  version: string;
  platform: Platform;
  sha256: string;
  size: number;
  signature?: string | null;
}

/** No answer from the server at all (refused, reset, timed out): nothing can be judged from it. */
export class UnreachableError extends Error {}

/** The SHA-256 the agent's latest heartbeat reports about its own binary, lowercase, if it sent one. */
export function reportedSha256(agent: AgentView): string | null {
  const system = agent.system;
  if (typeof system !== 'object' || system === null) return null;
  const sha = (system as { agent_sha256?: unknown }).agent_sha256;
  return typeof sha === 'string' ? sha.toLowerCase() : null;
}

export class UpdaterApi {
  private readonly base: URL;
  private readonly agentPath: string;

  constructor(
    serverUrl: string,
    private readonly apiKey: string,
    agentId: string,
    private readonly signal: AbortSignal,
  ) {
    this.base = baseOf(serverUrl);
    this.agentPath = `agents/${encodeURIComponent(agentId)}`;
  }

  async getAgent(): Promise<AgentView> {
    const agent = await this.getJson<AgentView>(this.agentPath);
    if (!agent) throw new ServerError(404, 'NOT_FOUND', 'the server does not know this agent');
    return agent;
  }

  latestFirmware(platform: Platform): Promise<FirmwareView | null> {
    return this.getJson<FirmwareView>('firmware/latest', { platform });
  }

  /** Streams the firmware to `file`, hashing on the way; returns the SHA-256 of what arrived. */
  async download(firmware: FirmwareView, file: string): Promise<string> {
    const res = await this.call('GET', 'firmware/download', { platform: firmware.platform, version: firmware.version }, DOWNLOAD_TIMEOUT_MS);
    if (!res.ok || !res.body) throw await errorOf(res);
    const hash = createHash('sha256');
    await pipeline(
      Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(file, { mode: 0o700 }),
    );
    return hash.digest('hex');
  }

  async clearFlag(): Promise<void> {
    const res = await this.call('DELETE', `${this.agentPath}/request-update`);
    if (!res.ok) throw await errorOf(res);
    await res.body?.cancel();
  }

  async report(report: UpdaterReport): Promise<void> {
    const body = { ...report, ...(report.message !== undefined ? { message: report.message.slice(0, MAX_REPORT_MESSAGE) } : {}) };
    const res = await this.call('POST', `${this.agentPath}/updater-report`, {}, REQUEST_TIMEOUT_MS, body);
    if (!res.ok) throw await errorOf(res);
    await res.body?.cancel();
  }

  /** The JSON answer, or null on 404. */
  private async getJson<T>(apiPath: string, query: Record<string, string> = {}): Promise<T | null> {
    const res = await this.call('GET', apiPath, query);
    if (res.ok) return (await res.json()) as T;
    if (res.status !== 404) throw await errorOf(res);
    await res.body?.cancel();
    return null;
  }

  private async call(method: string, apiPath: string, query: Record<string, string> = {}, timeoutMs = REQUEST_TIMEOUT_MS, json?: unknown): Promise<Response> {
    const url = new URL(`api/v1/${apiPath}`, this.base);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    try {
      return await fetch(url, {
        method,
        headers: { 'x-api-key': this.apiKey, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
        signal: AbortSignal.any([this.signal, AbortSignal.timeout(timeoutMs)]),
      });
    } catch (err) {
      if (this.signal.aborted) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (cause?.code ?? cause?.message ?? (err as Error).message);
      throw new UnreachableError(`cannot reach the server: ${why}`);
    }
  }
}

async function errorOf(res: Response): Promise<ServerError> {
  const text = await res.text().catch(() => '');
  let body: { error?: unknown; code?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // not JSON: the status and the start of the text say enough
  }
  const message = typeof body.error === 'string' ? body.error : text.slice(0, 200) || res.statusText;
  return new ServerError(res.status, typeof body.code === 'string' ? body.code : null, `HTTP ${res.status}: ${message}`);
}
