// The heartbeat batch's one statement, with a text that depends only on the batch's size class and the
// extensions, never on the heartbeats: the small per-heartbeat values travel as one JSON parameter (an
// array of one object per heartbeat, read by json_to_recordset into the rows `v`), and each body as a
// parameter of its own. PostgreSQL can then keep it as a prepared statement on each connection and skip
// parsing and planning it for every batch: with a VALUES row of 28 parameters per heartbeat, 2.0 of the
// 5.2 ms of database CPU a 29-heartbeat batch cost went to parsing, binding and planning its 812
// parameters (bench/README.md, 2026-11-27). One JSON text rather than an array parameter per column:
// pg builds array literals in JavaScript, escaping each element (8 KB of garbage a heartbeat, with the
// certificates' JSON inside a text[]), where JSON.stringify is one native call and nested values (the
// certificates, the metric values) go in as they are.
//
// Bodies stay one parameter each (a text[] of 30 KB bodies made the driver escape, and PostgreSQL
// re-parse, one huge array literal); their count is rounded up to a size class, the unused ones null,
// so a few texts serve every batch size. Each goes as the request's bytes (a Buffer, a bytea parameter
// in the binary format), sliced there at the cuts of system-cuts.ts by byte offset, and each slice made
// text by convert_from, which checks its UTF-8 as text input does (NUL included).
import type { PendingHeartbeat } from './heartbeat-input.js';

/** A column of the batch's rows `v`: one value per heartbeat, converted from JSON to `type` (arrays and jsonb included). */
export interface BatchColumn {
  name: string;
  type: 'text' | 'int' | 'float8' | 'boolean' | 'timestamptz' | 'int[]' | 'float8[]' | 'text[]' | 'jsonb';
}

/** What an extension (heartbeat-writer.ts) adds to the statement. */
export interface BatchStatementPart {
  readonly columns: readonly BatchColumn[];
  readonly statement: string;
}

/** The columns every batch has; `scope` is the sender's customer scope, or null for every customer. */
const BASE_COLUMNS: readonly BatchColumn[] = [
  { name: 'id', type: 'text' },
  { name: 'received_at', type: 'timestamptz' },
  { name: 'platform', type: 'text' },
  { name: 'hostname', type: 'text' },
  { name: 'agent_version', type: 'text' },
  { name: 'agent_sha256', type: 'text' },
  { name: 'key_hint', type: 'text' },
  { name: 'scope', type: 'int[]' },
  { name: 'os_name', type: 'text' },
  { name: 'os_version', type: 'text' },
  { name: 'primary_ip', type: 'text' },
  { name: 'uptime_seconds', type: 'int' },
  { name: 'disk_used_percent', type: 'float8' },
  { name: 'disk_worst_mount', type: 'text' },
  { name: 'pending_updates', type: 'int' },
  { name: 'reboot_required', type: 'boolean' },
  // Where the body is cut (system-cuts.ts), in bytes; no parts: stored whole in `system`.
  { name: 'piece_starts', type: 'int[]' },
  { name: 'piece_lengths', type: 'int[]' },
  { name: 'part_starts', type: 'int[]' },
  { name: 'part_lengths', type: 'int[]' },
  { name: 'part_hashes', type: 'text[]' },
];

/** A row of `v`: values by column name. */
export type BatchRow = object;

/**
 * The base columns' values of one heartbeat. The agent's own text is stored well-formed: a lone
 * surrogate (the heartbeat's fields are taken as sent) becomes U+FFFD, as the UTF-8 encoding of a text
 * parameter made of it; in the JSON parameter PostgreSQL would refuse it and fail the whole batch. NUL is
 * refused by the body's schema.
 */
export function baseRowOf(h: PendingHeartbeat): Record<string, unknown> {
  return {
    id: h.agentId,
    received_at: h.receivedAt.toISOString(),
    platform: h.platform,
    hostname: h.hostname?.toWellFormed() ?? null,
    agent_version: h.agentVersion?.toWellFormed() ?? null,
    agent_sha256: h.agentSha256,
    key_hint: h.keyHint,
    scope: h.scope,
    ...h.system,
    piece_starts: h.cuts.pieceStarts,
    piece_lengths: h.cuts.pieceLengths,
    part_starts: h.cuts.partStarts,
    part_lengths: h.cuts.partLengths,
    part_hashes: h.cuts.partHashes,
  };
}

/** Extensions share the rows `v`: a column name used twice (or a base column's, or `ord`) is a programming error. */
export function assertDistinctColumns(parts: readonly BatchStatementPart[]): void {
  const names = [...BASE_COLUMNS, ...parts.flatMap((p) => p.columns), { name: 'ord' }].map((c) => c.name);
  const repeated = names.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined) throw new Error(`heartbeat batch column "${repeated}" is defined twice`);
}

/** Body parameters come in these counts; a batch uses the smallest that holds it. */
export function bodySlotsFor(count: number): number {
  let slots = 1;
  while (slots < count) slots *= 2;
  return slots;
}

/**
 * The statement's text for `bodySlots` bodies. Its parameters: the rows' JSON (batchParameters: each
 * row keyed by column name, `ord` its 1-based position in the batch), then the bodies. It returns the
 * accepted heartbeats' `ord`, update flag and customer.
 */
export function batchStatementText(parts: readonly BatchStatementPart[], bodySlots: number): string {
  const columns = [...BASE_COLUMNS, ...parts.flatMap((p) => p.columns), { name: 'ord', type: 'int' }];
  const definitions = columns.map((c) => `${c.name} ${c.type}`).join(', ');
  const bodies = Array.from({ length: bodySlots }, (_, i) => `(${i + 1}, $${i + 2}::bytea)`).join(', ');
  const extensionCtes = parts.map((p, i) => `,\n  extension_${i} as (${p.statement})`).join('');
  // Data-modifying CTEs always run, referenced or not, and all in the statement's one snapshot.
  return `with v as (
    select * from json_to_recordset($1::json) as v(${definitions})
  ),
  bodies(ord, raw) as (values ${bodies}),
  updated as (
    update agents as a set
      last_heartbeat = v.received_at,
      platform = v.platform,
      hostname = coalesce(v.hostname, a.hostname),
      agent_version = coalesce(v.agent_version, a.agent_version),
      agent_sha256 = coalesce(v.agent_sha256, a.agent_sha256),
      last_api_key = coalesce(v.key_hint, a.last_api_key),
      system = case when cardinality(v.part_hashes) = 0 then convert_from(b.raw, 'UTF8') end,
      system_pieces = case when cardinality(v.part_hashes) > 0 then array(
        select convert_from(substring(b.raw from x.s + 1 for x.n), 'UTF8') from unnest(v.piece_starts, v.piece_lengths) with ordinality as x(s, n, i) order by x.i) end,
      system_refs = case when cardinality(v.part_hashes) > 0 then v.part_hashes end,
      os_name = v.os_name, os_version = v.os_version, primary_ip = v.primary_ip, uptime_seconds = v.uptime_seconds,
      disk_used_percent = v.disk_used_percent, disk_worst_mount = v.disk_worst_mount, pending_updates = v.pending_updates,
      reboot_required = v.reboot_required
    from v join bodies as b on b.ord = v.ord
    where a.id = v.id and (v.scope is null or a.customer_id = any(v.scope))
    returning v.ord, a.update_requested, a.customer_id
  ),
  -- A part already stored for the agent is left alone: unchanged members write nothing.
  parts as (
    insert into agent_system_parts (agent_id, hash, raw)
    select v.id, x.hash, convert_from(substring(b.raw from x.s + 1 for x.n), 'UTF8')
      from v join updated as u on u.ord = v.ord join bodies as b on b.ord = v.ord
      cross join lateral unnest(v.part_hashes, v.part_starts, v.part_lengths) as x(hash, s, n)
    on conflict do nothing
  ),
  -- Parts the new body no longer has (this statement's inserts are not in its snapshot, so never these).
  stale_parts as (
    delete from agent_system_parts as p using v join updated as u on u.ord = v.ord
    where p.agent_id = v.id and p.hash <> all(v.part_hashes)
  )${extensionCtes}
  select ord, update_requested, customer_id from updated`;
}

/** The statement's parameters: the rows as one JSON array, then the bodies padded to `bodySlots`. */
export function batchParameters(rows: readonly BatchRow[], bodies: readonly Buffer[], bodySlots: number): unknown[] {
  return [JSON.stringify(rows), ...bodies, ...Array<null>(bodySlots - bodies.length).fill(null)];
}
