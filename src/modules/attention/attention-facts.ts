// The heartbeat batch extension that keeps agent_attention_facts current: the attention list's facts
// are read from the heartbeat the server has already parsed, and upserted in the batch's one statement,
// only for the heartbeats its agents update accepted. An unchanged row is not rewritten (the usual
// heartbeat changes nothing here), so the extension costs an index probe per heartbeat. Disks keep their
// fill level rounded to a whole percent, so a disk filling slowly does not rewrite the row every minute.
import type { HeartbeatBatchExtension } from '../agents/heartbeat-writer.js';

export interface AttentionFacts {
  updates_available: boolean | null;
  update_packages: number | null;
  certificates: Array<{ name: unknown; valid_to: unknown; in_use: unknown }>;
  disks: DiskFact[];
}

/** A disk's mount point and how full it is (whole percent), when the agent said. */
export interface DiskFact {
  mount: string | number | boolean | null;
  used_percent: number | null;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

// eslint-disable-next-line no-control-regex -- NUL is what it replaces
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * A certificate field as jsonb can hold it: a scalar (all the attention list reads), text without NUL or
 * lone surrogates, which jsonb refuses; one such certificate failed the whole heartbeat batch (503).
 */
function storable(value: unknown): string | number | boolean | null {
  if (typeof value === 'string') return value.replace(UNSTORABLE, '\ufffd');
  return typeof value === 'number' || typeof value === 'boolean' ? value : null;
}

/** The facts, each guarded by its type: an agent may send any shape. */
export function attentionFactsOf(system: Record<string, unknown>): AttentionFacts {
  const updates = isObject(system.updates) ? system.updates : {};
  const certificates = Array.isArray(system.certificates) ? system.certificates.filter(isObject) : [];
  return {
    updates_available: typeof updates.available === 'boolean' ? updates.available : null,
    update_packages: Array.isArray(updates.packages) ? updates.packages.length : null,
    certificates: certificates.map((c) => ({ name: storable(c.name), valid_to: storable(c.valid_to), in_use: storable(c.in_use) })),
    disks: (Array.isArray(system.disks) ? system.disks.filter(isObject) : []).map((d) => ({ mount: storable(d.mount), used_percent: usedPercent(d) })),
  };
}

/** `used_percent` as sent, else from used and total bytes; whole percent, or null when unknown. */
function usedPercent(disk: Record<string, unknown>): number | null {
  const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  if (finite(disk.used_percent)) return Math.round(disk.used_percent);
  if (finite(disk.used_bytes) && finite(disk.total_bytes) && disk.total_bytes > 0) return Math.round((disk.used_bytes / disk.total_bytes) * 100);
  return null;
}

export class AttentionFactsWriter implements HeartbeatBatchExtension<AttentionFacts> {
  readonly columns = [
    { name: 'updates_available', type: 'boolean' },
    { name: 'update_packages', type: 'int' },
    { name: 'certificates', type: 'jsonb' },
    { name: 'disks', type: 'jsonb' },
  ] as const;
  readonly statement = `
    insert into agent_attention_facts (agent_id, updates_available, update_packages, certificates, disks)
    select v.id, v.updates_available, v.update_packages, v.certificates, v.disks
    from v join updated as u on u.ord = v.ord
    on conflict (agent_id) do update set
      updates_available = excluded.updates_available,
      update_packages = excluded.update_packages,
      certificates = excluded.certificates,
      disks = excluded.disks
    where (agent_attention_facts.updates_available, agent_attention_facts.update_packages, agent_attention_facts.certificates, agent_attention_facts.disks)
      is distinct from (excluded.updates_available, excluded.update_packages, excluded.certificates, excluded.disks)`;

  read(body: Record<string, unknown>): AttentionFacts {
    return attentionFactsOf(body);
  }

  async valuesFor(facts: readonly AttentionFacts[]): Promise<readonly AttentionFacts[]> {
    return facts;
  }
}
