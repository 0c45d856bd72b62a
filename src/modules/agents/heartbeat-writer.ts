// Group commit for heartbeats, the hottest path of the product: every request joins the next batch,
// each batch is one SQL statement (heartbeat-batch-statement.ts: agent rows updated from one row per
// heartbeat, plus the writes that batch extensions add as data-modifying CTEs, e.g. metric samples), and
// every request is answered only after its batch committed. One statement is atomic by itself and saves
// a transaction's two extra round trips. While one batch is being written the next one fills up, so
// throughput rises with load and a lone heartbeat waits for nobody. A failed batch fails all its
// requests; nothing unacknowledged is lost.
import type { Kysely } from 'kysely';
import { throughKysely, type StatementRunner } from '../../db/create-db.js';
import type { Database } from '../../db/schema.js';
import { GroupCommit } from '../../platform/group-commit.js';
import type { CustomerScope } from '../auth/caller.js';
import { preparedText } from '../../db/prepared-statements.js';
import { systemCuts } from './system-cuts.js';
import { systemFactsOf } from './system-facts.js';
import { assertDistinctColumns, baseRowOf, batchParameters, batchStatementText, bodySlotsFor, type BatchRow, type BatchStatementPart } from './heartbeat-batch-statement.js';
import type { HeartbeatInput, PendingHeartbeat } from './heartbeat-input.js';

export type { HeartbeatInput, PendingHeartbeat } from './heartbeat-input.js';

export interface HeartbeatOutcome {
  /** False when the agent does not exist (or is outside the key's customer scope). */
  found: boolean;
  updateRequested: boolean;
}

/**
 * Adds writes to a batch (the metrics extension point): columns of per-heartbeat values for the batch's
 * rows `v`, and one data-modifying statement of constant text (an INSERT ... SELECT) that becomes a CTE
 * of the batch's single statement, so it commits or fails with the agents update. It must write only for
 * the heartbeats that update accepted: join `v` to the CTE `updated` on `ord`.
 */
export interface HeartbeatBatchExtension<Reading = unknown> extends BatchStatementPart {
  /** What the extension needs of a parsed body, read synchronously when the heartbeat is handed over (keep it small). */
  read(body: Record<string, unknown>): Reading;
  /** Each heartbeat's values of `columns`, by column name, from what `read` returned. */
  valuesFor(readings: readonly Reading[]): Promise<readonly BatchRow[]>;
}

/** A heartbeat its batch stored, with the agent's customer (for rules scoped to a customer). */
export interface AcceptedHeartbeat {
  input: PendingHeartbeat;
  customerId: number | null;
}

export interface HeartbeatWriterOptions {
  /** Batches written at the same time: 1 for PGlite (one connection), a few for PostgreSQL. */
  lanes?: number;
  maxBatch?: number;
  /**
   * How long each batch waits for company (GroupCommit's `gatherMs`, after an idle spell too; default 0:
   * never). After an idle spell as well: when a batch was answered its senders come back a moment later,
   * and the first of them could find the pipeline idle and get a statement of its own. On PGlite (5 ms)
   * gathering it too took B1 at 32 clients from 0.21 to 0.25 of bare and from 948 to 805 µs of CPU a
   * heartbeat (bench/README.md, 2026-11-27). A quiet server's heartbeat waits 5 ms more.
   */
  gatherMs?: number;
  /**
   * Told about each committed batch's stored heartbeats (alert thresholds); called synchronously
   * before the requests are answered, so it must only queue its work, and it must not throw.
   */
  committed?: (accepted: readonly AcceptedHeartbeat[]) => void;
  /** How the batch statement is sent (DbHandle.run: on PostgreSQL, around Kysely); through `db` by default. */
  run?: StatementRunner;
  /** Told how many bytes of system text each committed batch wrote (PGlite's vacuum and checkpoints, pglite-upkeep.ts). */
  wrote?: (bytes: number) => void;
}

export class HeartbeatWriter {
  /**
   * Serial group-commit pipelines, heartbeats spread over them by agent id: lanes write in parallel on
   * separate connections, and since an agent always lands in the same lane, two transactions never wait
   * on each other's rows (no deadlocks).
   */
  readonly #lanes: GroupCommit<PendingHeartbeat, HeartbeatOutcome>[];
  readonly #committed: ((accepted: readonly AcceptedHeartbeat[]) => void) | undefined;
  readonly #wrote: ((bytes: number) => void) | undefined;
  readonly #run: StatementRunner;
  /**
   * Per agent, what its last body's members were (system-cuts.ts), so a small member that stays the same
   * is stored as a part. About 150 bytes an agent; only where storing it is cut, never what is stored:
   * a part is written with the body's own text whenever it is missing.
   */
  readonly #cutMemory = new Map<string, string>();
  /** The statement's text per body size class (heartbeat-batch-statement.ts). */
  readonly #texts = new Map<number, string>();

  constructor(
    db: Kysely<Database>,
    private readonly extensions: readonly HeartbeatBatchExtension[] = [],
    options: HeartbeatWriterOptions = {},
  ) {
    assertDistinctColumns(extensions);
    const count = Math.max(1, options.lanes ?? 1);
    const maxBatch = options.maxBatch ?? 200;
    this.#committed = options.committed;
    this.#wrote = options.wrote;
    this.#run = options.run ?? throughKysely(db as Kysely<unknown>);
    const gatherMs = options.gatherMs ?? 0;
    this.#lanes = Array.from({ length: count }, () => new GroupCommit((inputs: PendingHeartbeat[]) => this.#writeLane(inputs), { maxBatch, gatherMs }));
  }

  write(input: HeartbeatInput): Promise<HeartbeatOutcome> {
    const { parsed, ...fields } = input;
    const cuts = systemCuts(fields.raw, Object.keys(parsed), { previous: this.#cutMemory.get(fields.agentId) });
    this.#cutMemory.set(fields.agentId, cuts.memory);
    const pending: PendingHeartbeat = { ...fields, system: systemFactsOf(parsed), cuts, readings: this.extensions.map((e) => e.read(parsed)) };
    return this.#lanes[laneOf(input.agentId, this.#lanes.length)]!.submit(pending);
  }

  /** What `extension` (one of this writer's) read from a heartbeat's body. */
  readingOf<Reading>(heartbeat: PendingHeartbeat, extension: HeartbeatBatchExtension<Reading>): Reading {
    const index = this.extensions.indexOf(extension);
    if (index < 0) throw new Error('not an extension of this heartbeat writer');
    return heartbeat.readings[index] as Reading;
  }

  async #writeLane(inputs: PendingHeartbeat[]): Promise<HeartbeatOutcome[]> {
    const { stored, latest } = await this.#writeBatch(inputs);
    if (this.#wrote) this.#wrote(latest.reduce((bytes, h) => bytes + h.raw.length, 0));
    if (this.#committed) {
      const accepted = latest.flatMap((input) => {
        const row = stored.get(batchKey(input));
        return row ? [{ input, customerId: row.customer_id }] : [];
      });
      if (accepted.length > 0) this.#committed(accepted);
    }
    return inputs.map((input) => {
      const row = stored.get(batchKey(input));
      // Unknown agents (or a key that may not write them) leave nothing behind.
      if (row === undefined) this.#cutMemory.delete(input.agentId);
      return { found: row !== undefined, updateRequested: row?.update_requested ?? false };
    });
  }

  /** One statement for the batch; returns the known agents with their update flag and customer, and the heartbeats written. */
  async #writeBatch(
    inputs: PendingHeartbeat[],
  ): Promise<{ stored: Map<string, { update_requested: boolean; customer_id: number | null }>; latest: PendingHeartbeat[] }> {
    // An agent twice in one batch: its latest heartbeat wins, and both requests get the same answer.
    // Keyed with the sender's scope, so a key of another customer never learns from, or displaces, a
    // genuine heartbeat that shares its batch.
    const latest = [...new Map(inputs.map((h) => [batchKey(h), h])).values()];
    const extensionRows = await Promise.all(this.extensions.map((e, index) => e.valuesFor(latest.map((h) => h.readings[index]))));
    const rows = latest.map((h, i) => Object.assign(baseRowOf(h), ...extensionRows.map((values) => values[i]), { ord: i + 1 }));
    const slots = bodySlotsFor(latest.length);
    let text = this.#texts.get(slots);
    if (text === undefined) this.#texts.set(slots, (text = preparedText(batchStatementText(this.extensions, slots))));
    const parameters = batchParameters(rows, latest.map((h) => h.raw), slots);
    const updated = await this.#run<{ ord: number; update_requested: boolean; customer_id: number | null }>(text, parameters);
    const stored = new Map(updated.map((r) => [batchKey(latest[r.ord - 1]!), { update_requested: r.update_requested, customer_id: r.customer_id }]));
    return { stored, latest };
  }
}

function batchKey(h: { agentId: string; scope: CustomerScope }): string {
  return `${h.agentId}|${h.scope?.join(',') ?? '*'}`;
}

/** A stable lane for an agent id (hex), so one agent's heartbeats are always written in order. */
function laneOf(agentId: string, lanes: number): number {
  return lanes === 1 ? 0 : Number.parseInt(agentId.slice(-6), 16) % lanes;
}
