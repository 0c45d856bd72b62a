// Group commit for heartbeats, the hottest path of the product: every request joins the next batch,
// each batch is one SQL statement (agent rows updated from one VALUES list, plus the writes that batch
// extensions add as data-modifying CTEs, e.g. metric samples), and every request is answered only after
// its batch committed. One statement is atomic by itself and saves a transaction's two extra round
// trips. While one batch is being written the next one fills up, so throughput rises with load and a
// lone heartbeat waits for nobody. A failed batch fails all its requests; nothing unacknowledged is lost.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database, Platform } from '../../db/schema.js';
import { GroupCommit } from '../../platform/group-commit.js';
import type { CustomerScope } from '../auth/caller.js';
import { systemFactsOf } from './system-facts.js';

export interface HeartbeatInput {
  agentId: string;
  platform: Platform;
  hostname: string | null;
  agentVersion: string | null;
  agentSha256: string | null;
  /** The request body exactly as received; stored and served as is. */
  raw: string;
  /** The same body, parsed once, for extensions that read values out of it (metrics). */
  parsed: Record<string, unknown>;
  /** Hint of the API key that sent it, or null for a signed-in user. */
  keyHint: string | null;
  scope: CustomerScope;
  receivedAt: Date;
}

export interface HeartbeatOutcome {
  /** False when the agent does not exist (or is outside the key's customer scope). */
  found: boolean;
  updateRequested: boolean;
}

/**
 * Adds writes to a batch (the metrics extension point). For the batch's heartbeats it returns one
 * data-modifying statement (an INSERT ...), or null for nothing. The statement becomes a CTE of the
 * batch's single statement, so it commits or fails with the agents update, and it must write only for
 * the heartbeats that update accepted: those are in the CTE `updated(id, scope)`, to be joined on agent
 * id and `scope is not distinct from` the heartbeat's scope.
 */
export interface HeartbeatBatchExtension {
  statementFor(heartbeats: readonly HeartbeatInput[]): Promise<RawBuilder<unknown> | null>;
}

/** A heartbeat its batch stored, with the agent's customer (for rules scoped to a customer). */
export interface AcceptedHeartbeat {
  input: HeartbeatInput;
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
  /** Told how many bytes of system text each committed batch wrote (PGlite's vacuum, pglite-vacuum.ts). */
  wrote?: (bytes: number) => void;
}

export class HeartbeatWriter {
  /**
   * Serial group-commit pipelines, heartbeats spread over them by agent id: lanes write in parallel on
   * separate connections, and since an agent always lands in the same lane, two transactions never wait
   * on each other's rows (no deadlocks).
   */
  readonly #lanes: GroupCommit<HeartbeatInput, HeartbeatOutcome>[];
  readonly #committed: ((accepted: readonly AcceptedHeartbeat[]) => void) | undefined;
  readonly #wrote: ((bytes: number) => void) | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly extensions: readonly HeartbeatBatchExtension[] = [],
    options: HeartbeatWriterOptions = {},
  ) {
    const count = Math.max(1, options.lanes ?? 1);
    const maxBatch = options.maxBatch ?? 200;
    this.#committed = options.committed;
    this.#wrote = options.wrote;
    const gatherMs = options.gatherMs ?? 0;
    this.#lanes = Array.from({ length: count }, () => new GroupCommit((inputs: HeartbeatInput[]) => this.#writeLane(inputs), { maxBatch, gatherMs }));
  }

  write(input: HeartbeatInput): Promise<HeartbeatOutcome> {
    return this.#lanes[laneOf(input.agentId, this.#lanes.length)]!.submit(input);
  }

  async #writeLane(inputs: HeartbeatInput[]): Promise<HeartbeatOutcome[]> {
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
      return { found: row !== undefined, updateRequested: row?.update_requested ?? false };
    });
  }

  /** One statement for the batch; returns the known agents with their update flag and customer, and the heartbeats written. */
  async #writeBatch(
    inputs: HeartbeatInput[],
  ): Promise<{ stored: Map<string, { update_requested: boolean; customer_id: number | null }>; latest: HeartbeatInput[] }> {
    // An agent twice in one batch: its latest heartbeat wins, and both requests get the same answer.
    // Keyed with the sender's scope, so a key of another customer never learns from, or displaces, a
    // genuine heartbeat that shares its batch.
    const latest = [...new Map(inputs.map((h) => [batchKey(h), h])).values()];
    // One row of parameters per heartbeat: a 30 KB body travels as its own text parameter. (Packing
    // all bodies into one text[] made the driver escape and PostgreSQL re-parse one huge array.)
    // The list's facts (system-facts.ts) replace the previous heartbeat's, as the system data does.
    const rows = latest.map((h) => {
      const f = systemFactsOf(h.parsed);
      return sql`(${h.agentId}::text, ${h.receivedAt.toISOString()}::timestamptz, ${h.platform}::text, ${h.hostname}::text,
        ${h.agentVersion}::text, ${h.agentSha256}::text, ${h.keyHint}::text, ${scopeArray(h.scope)}::int[], ${h.raw}::text,
        ${f.os_name}::text, ${f.os_version}::text, ${f.primary_ip}::text, ${f.uptime_seconds}::int, ${f.disk_used_percent}::float8,
        ${f.disk_worst_mount}::text, ${f.pending_updates}::int, ${f.reboot_required}::boolean)`;
    });
    const added = (await Promise.all(this.extensions.map((e) => e.statementFor(latest)))).filter((s) => s !== null);
    // Data-modifying CTEs always run, referenced or not, and all in the statement's one snapshot.
    const extensionCtes = added.map((statement, i) => sql`, ${sql.raw(`extension_${i}`)} as (${statement})`);
    const { rows: updated } = await sql<{ id: string; scope: number[] | null; update_requested: boolean; customer_id: number | null }>`
      with updated as (
        update agents as a set
          last_heartbeat = v.received_at,
          platform = v.platform,
          hostname = coalesce(v.hostname, a.hostname),
          agent_version = coalesce(v.agent_version, a.agent_version),
          agent_sha256 = coalesce(v.agent_sha256, a.agent_sha256),
          last_api_key = coalesce(v.key_hint, a.last_api_key),
          system = v.raw,
          os_name = v.os_name, os_version = v.os_version, primary_ip = v.primary_ip, uptime_seconds = v.uptime_seconds,
          disk_used_percent = v.disk_used_percent, disk_worst_mount = v.disk_worst_mount, pending_updates = v.pending_updates,
          reboot_required = v.reboot_required
        from (values ${sql.join(rows)}) as v(id, received_at, platform, hostname, agent_version, agent_sha256, key_hint, scope, raw,
          os_name, os_version, primary_ip, uptime_seconds, disk_used_percent, disk_worst_mount, pending_updates, reboot_required)
        where a.id = v.id and (v.scope is null or a.customer_id = any(v.scope))
        returning a.id, v.scope, a.update_requested, a.customer_id
      )${sql.join(extensionCtes, sql``)}
      select id, scope, update_requested, customer_id from updated`.execute(this.db);
    const stored = new Map(updated.map((r) => [batchKey({ agentId: r.id, scope: r.scope }), { update_requested: r.update_requested, customer_id: r.customer_id }]));
    return { stored, latest };
  }
}

function batchKey(h: { agentId: string; scope: CustomerScope }): string {
  return `${h.agentId}|${h.scope?.join(',') ?? '*'}`;
}

/** The scope as an array literal ('{3,7}'), the one form both PostgreSQL drivers take as a parameter. */
export function scopeArray(scope: CustomerScope): string | null {
  return scope === null ? null : `{${scope.join(',')}}`;
}

/** A stable lane for an agent id (hex), so one agent's heartbeats are always written in order. */
function laneOf(agentId: string, lanes: number): number {
  return lanes === 1 ? 0 : Number.parseInt(agentId.slice(-6), 16) % lanes;
}
