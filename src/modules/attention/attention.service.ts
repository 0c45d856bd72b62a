// Agents needing attention (web console's fleet page, issue 15): offline or stale, operating-system or
// package updates available (from the agent's own `updates.available`), certificates in use that
// expire within the warning window or already have, and disks filled to the threshold (issue 33). One request replaces reading every agent's
// system data in the browser.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Page, PageKey, PageRequest } from '../../platform/paging.js';
import { scopeOf, type Caller } from '../auth/caller.js';
import { statusOf, type AgentStatus } from '../agents/agent-status.js';
import { listAttentionFacts, type AttentionRow } from './attention.repo.js';

/** Most severe first: the fleet page ranks agents by their most severe reason in this order. */
export const ATTENTION_KINDS = ['offline', 'stale', 'certificate_expired', 'certificate_expiring', 'disk_full', 'updates_available'] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number];

export interface AttentionReason {
  kind: AttentionKind;
  message: string;
  /** Certificates: when it expires (as the agent reported it). */
  valid_to?: string;
  /** Updates: how many packages wait (when the agent listed them). */
  packages?: number;
  /** Disks: the mount point and how full it is (percent). */
  mount?: string;
  used_percent?: number;
}

export interface AttentionThresholds {
  certificateDays: number;
  diskPercent: number;
}

export interface AttentionItem {
  agent: Omit<AttentionRow, 'updates_available' | 'update_packages' | 'certificates' | 'disks'> & { status: AgentStatus };
  reasons: AttentionReason[];
}

const DAY_MS = 86_400_000;
/** Agents read per statement while looking for the next page's items (most agents need no attention). */
const SCAN_ROWS = 500;

export class AttentionService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /** A page of the agents with at least one reason, by name; agents without one are skipped over. */
  async list(caller: Caller, thresholds: AttentionThresholds, page: PageRequest): Promise<Page<AttentionItem>> {
    const now = this.clock.now();
    const items: AttentionItem[] = [];
    let last: PageKey | null = null;
    for (let after = page.after; ; ) {
      const rows = await listAttentionFacts(this.db, scopeOf(caller), { limit: SCAN_ROWS, after });
      for (const row of rows) {
        const status = statusOf(row.last_heartbeat, now);
        const reasons = reasonsOf(row, status, now, thresholds);
        if (reasons.length === 0) continue;
        // One more item than the page holds: the page ends at the previous one, and more follow.
        if (items.length === page.limit) return { items, next: last };
        const { updates_available: _u, update_packages: _p, certificates: _c, disks: _d, page_key, ...agent } = row;
        items.push({ agent: { ...agent, status }, reasons });
        last = page_key;
      }
      if (rows.length < SCAN_ROWS) return { items, next: null };
      after = rows.at(-1)!.page_key;
    }
  }
}

export function reasonsOf(row: AttentionRow, status: AgentStatus, now: Date, { certificateDays, diskPercent }: AttentionThresholds): AttentionReason[] {
  const reasons: AttentionReason[] = [];
  if (status === 'offline') reasons.push({ kind: 'offline', message: 'No heartbeat for more than 5 minutes' });
  if (status === 'stale') reasons.push({ kind: 'stale', message: 'Heartbeat 2 to 5 minutes old' });
  if (row.updates_available === true) {
    const count = row.update_packages ?? 0;
    reasons.push(
      count > 0 ? { kind: 'updates_available', message: `${count} update${count === 1 ? '' : 's'} available`, packages: count } : { kind: 'updates_available', message: 'Updates available' },
    );
  }
  const horizon = now.getTime() + certificateDays * DAY_MS;
  for (const cert of row.certificates ?? []) {
    if (cert.in_use === false || typeof cert.valid_to !== 'string') continue;
    const expires = Date.parse(cert.valid_to);
    if (Number.isNaN(expires) || expires > horizon) continue;
    const name = typeof cert.name === 'string' && cert.name !== '' ? cert.name : 'unnamed certificate';
    const days = Math.floor((expires - now.getTime()) / DAY_MS);
    reasons.push(
      expires <= now.getTime()
        ? { kind: 'certificate_expired', message: `Certificate ${name} expired`, valid_to: new Date(expires).toISOString() }
        : { kind: 'certificate_expiring', message: `Certificate ${name} expires in ${days} day${days === 1 ? '' : 's'}`, valid_to: new Date(expires).toISOString() },
    );
  }
  for (const disk of row.disks ?? []) {
    if (typeof disk.used_percent !== 'number' || disk.used_percent < diskPercent) continue;
    const mount = typeof disk.mount === 'string' && disk.mount !== '' ? disk.mount : 'unnamed disk';
    reasons.push({ kind: 'disk_full', message: `Disk ${mount} ${disk.used_percent}% full`, mount, used_percent: disk.used_percent });
  }
  return reasons;
}
