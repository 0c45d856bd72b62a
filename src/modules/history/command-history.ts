// The command history (issue 33, Build 3): every exec, ad hoc or scripted, single, bulk or from a task,
// goes through `run`, which records the run as the command leaves (so a run in progress is listed,
// and its entry survives the technician leaving the page) and completes it with the exit code, the
// duration and the output: stdout and stderr together at most 256 KiB, gzip-compressed unless short.
// The writes follow the answer instead of preceding it (history-writer.ts); reads wait for them (flush).
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Kysely } from 'kysely';
import type { CommandHistoryTable, Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError, isAppError } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import { execResultSchema } from '../agent-hub/agent-protocol.js';
import { actorOf, type Caller } from '../auth/caller.js';
import { HistoryWriter, type OutcomeOf } from './history-writer.js';
import type { StartedRow } from './history.repo.js';
import { logFailure } from '../../db/db-errors.js';

export const OUTPUT_CAP_BYTES = 256 * 1024;
/** stderr keeps at most this much of the cap when both are long: the error is usually the point. */
const STDERR_SHARE_BYTES = 64 * 1024;
const PREVIEW_CHARS = 2048;
/**
 * Output whose stored JSON is shorter than this is kept as it is: gzip saves next to nothing on a line or
 * two, and compressing costs every exec about 15 µs of CPU (a deflate state set up and torn down) while
 * most commands print a line or two. Stored JSON starts with `{`, gzip with 0x1f 0x8b: reads tell them apart.
 */
const COMPRESS_FROM_BYTES = 512;
const GZIP_MAGIC = [0x1f, 0x8b] as const;

/** The agent's exec answer; fields beyond these (stdout_truncated, …) pass through untouched. */
export interface ExecAnswer {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  [more: string]: unknown;
}

/** Who ran it and from where: the history's "who" and "source" columns. */
export interface ExecOrigin {
  source: CommandHistoryTable['source'];
  actor_type: CommandHistoryTable['actor_type'];
  actor: string;
  script?: { id: number; name: string } | undefined;
}

/** The origin of an exec a caller runs directly (REST, console). */
export function originOf(caller: Caller, source: ExecOrigin['source'], script?: ExecOrigin['script']): ExecOrigin {
  return { source, ...actorOf(caller), script };
}

/** `text` cut to at most `bytes` of UTF-8, never inside a character. */
function capUtf8(text: string, bytes: number): { text: string; cut: boolean } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= bytes) return { text, cut: false };
  let end = bytes;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--; // back to the start of a character
  return { text: buf.subarray(0, end).toString('utf8'), cut: true };
}

/** The stored form of an answer's output. */
export function packOutput(answer: ExecAnswer) {
  const stderrBytes = Buffer.byteLength(answer.stderr, 'utf8');
  const stderr = capUtf8(answer.stderr, Math.max(STDERR_SHARE_BYTES, OUTPUT_CAP_BYTES - Buffer.byteLength(answer.stdout, 'utf8')));
  const stdout = capUtf8(answer.stdout, OUTPUT_CAP_BYTES - Buffer.byteLength(stderr.text, 'utf8'));
  const kept = { stdout: stdout.text, stderr: stderr.text };
  const json = Buffer.from(JSON.stringify(kept), 'utf8');
  return {
    output: json.length < COMPRESS_FROM_BYTES ? json : gzipSync(json),
    output_bytes: Buffer.byteLength(answer.stdout, 'utf8') + stderrBytes,
    output_truncated: stdout.cut || stderr.cut,
    output_preview: `${kept.stdout.slice(0, PREVIEW_CHARS)}${kept.stderr ? `\n${kept.stderr.slice(0, PREVIEW_CHARS)}` : ''}`,
  };
}

export function unpackOutput(output: Buffer | null): { stdout: string; stderr: string } | null {
  if (output === null) return null;
  const gzipped = output[0] === GZIP_MAGIC[0] && output[1] === GZIP_MAGIC[1];
  // PGlite returns bytea as a plain Uint8Array, whose toString() lists the bytes: decode explicitly.
  const json = gzipped ? gunzipSync(output) : Buffer.from(output.buffer, output.byteOffset, output.byteLength);
  return JSON.parse(json.toString('utf8')) as { stdout: string; stderr: string };
}

export class CommandHistory {
  readonly #writer: HistoryWriter;
  /**
   * Runs whose id is still being reserved while their command already travels: the reservation can
   * take a database round trip (a new block of ids), and a read of the history must list a command the
   * agent has already received.
   */
  readonly #reserving = new Set<Promise<unknown>>();

  constructor(
    db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.#writer = new HistoryWriter(db, clock, logger);
  }

  /**
   * Records one exec around `send` (which sends it and resolves with the agent's answer) and passes the
   * answer or the error on. The command still runs when the history cannot be written (the database
   * is away): the exec matters more than its record, which is logged as lost. The entry's id is
   * reserved while the command travels; its row is written behind the answer (history-writer.ts).
   */
  async run(origin: ExecOrigin, agentId: string, command: string, timeoutS: number, send: () => Promise<ExecAnswer>): Promise<ExecAnswer & { history_id: number | null }> {
    const row: StartedRow = {
      agent_id: agentId,
      source: origin.source,
      actor_type: origin.actor_type,
      actor: origin.actor,
      script_id: origin.script?.id ?? null,
      script_name: origin.script?.name ?? null,
      command,
      timeout_s: timeoutS,
      started_at: this.clock.now(),
    };
    // Each handler takes the reservation out of #reserving itself: a `finally` would cost every exec
    // one more promise and microtask.
    const reserved: Promise<number | null> = this.#writer.reserveId().then(
      (id) => {
        this.#reserving.delete(reserved);
        this.#writer.started(id, row);
        return id;
      },
      (err: unknown) => {
        this.#reserving.delete(reserved);
        logFailure(this.logger, err, { agentId }, 'could not record an exec in the command history');
        return null;
      },
    );
    this.#reserving.add(reserved);
    let answer: ExecAnswer;
    try {
      answer = await send();
    } catch (err) {
      const error = isAppError(err) ? `${err.code}: ${err.message}` : 'Internal error while running the command';
      const finishedAt = this.clock.now();
      this.#finished(await reserved, () => ({ finished_at: finishedAt, exit_code: null, error, output: null, output_bytes: 0, output_truncated: false, output_preview: '' }));
      throw err;
    }
    const id = await reserved;
    const finishedAt = this.clock.now();
    this.#finished(id, () => ({ finished_at: finishedAt, exit_code: answer.exit_code, error: null, ...packOutput(answer) }));
    return { ...answer, history_id: id };
  }

  /** Waits for every entry begun so far to be stored (reads of the history, shutdown). */
  async flush(): Promise<void> {
    await Promise.all(this.#reserving);
    await this.#writer.flush();
  }

  #finished(id: number | null, outcome: OutcomeOf): void {
    if (id !== null) this.#writer.finished(id, outcome);
  }
}

/** Built once: deriving a schema compiles a new validator, which cost every exec about 40 µs and garbage. */
const execAnswerSchema = execResultSchema.loose();

/** Sends exec to an agent (answer waits as the REST exec: timeout + 15 s) and checks the answer's shape. */
export async function sendExec(commander: AgentCommander, agentId: string, command: string, timeoutS: number): Promise<ExecAnswer> {
  const data = await commander.request(agentId, 'exec', { command, timeout: timeoutS }, (timeoutS + 15) * 1000);
  const checked = execAnswerSchema.safeParse(data);
  if (!checked.success) throw new AppError('AGENT_ERROR', "The agent's answer to exec is malformed");
  return checked.data;
}
